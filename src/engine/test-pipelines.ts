import type { EventOf, TaskEvent } from '../core/events.js';
import type {
  AgentNode,
  Handoff,
  Pipeline,
  PipelineNode,
  SessionNode,
  WorkspaceSettings,
} from '../core/pipeline.js';
import { applyEvent, type TaskState } from './fold/task-state.js';

/** Builders for planner and fold tests: pipelines and event logs as plain objects. */

const at = { file: 'test.yaml', line: 1, col: 1 };

export function handoff(to: string, condition = 'always', payload = '{{ output }}'): Handoff {
  return { to: to.split(',').map((t) => t.trim()), task: '', condition, payload };
}

export function agent(id: string, extra: Partial<AgentNode> = {}): AgentNode {
  return {
    type: 'agent',
    id,
    name: id,
    runtime: 'claude',
    model: null,
    system_prompt: '{{ input }}',
    handoffs: [],
    gate: null,
    mcp: [],
    cli_flags: [],
    context_strategy: 'both',
    context_window: 3,
    human_input: null,
    retry: null,
    timeout: null,
    chunks: null,
    source: at,
    ...extra,
  };
}

export function session(id: string, participants: string[], extra: Partial<SessionNode> = {}): SessionNode {
  return {
    type: 'session',
    id,
    name: id,
    participants,
    turn_order: 'round_robin',
    max_rounds: 3,
    consensus: { method: 'vote', keyword: 'VOTE: AGREE', require: 'all', require_chunks_done: false },
    summary_agent: null,
    chunks: null,
    system_prompt: '',
    handoffs: [],
    context_strategy: 'both',
    context_window: 3,
    source: at,
    ...extra,
  };
}

export function pipeline(...agents: PipelineNode[]): Pipeline {
  return {
    name: 'test',
    file: 'test.yaml',
    apiVersion: null,
    entry_point: 'first',
    workspace: null,
    params: {},
    paramDefinitions: {},
    agents,
  };
}

/** `workspace: {isolation: worktree}` with the defaults, for a pipeline whose tasks work in worktrees. */
export const IN_WORKTREES: WorkspaceSettings = {
  isolation: 'worktree',
  base: null,
  merge: 'on_complete',
  branch_prefix: 'troupe/',
  remote: null,
};

/** The task's worktree is ready (in repository `/r`): the first git event of a task in worktrees. */
export const WORKSPACE_READY: EventOf<'workspace_ready'> = {
  type: 'workspace_ready',
  path: '/r/.troupe/worktrees/T-TEST',
  branch: 'troupe/T-TEST',
  base: 'main',
  repo: '/r',
};

/** A task log being written: `log.add(event)` folds as the store would replay it. */
export class Log {
  state: TaskState;
  private seq = 0;

  constructor(p: Pipeline, input = 'build it', maxStages = 20, startAgent: string | null = p.agents[0]!.id) {
    this.state = applyEvent(undefined, {
      type: 'task_created',
      pipeline: p.name,
      pipelineFile: p.file,
      definition: p,
      input,
      startAgent,
      cwd: '/tmp',
      maxStages,
      timeouts: {},
      gate: { model: null, timeout: 120, system_prompt: '' },
      script: null,
      parentTaskId: null,
      kind: 'run',
      seq: ++this.seq,
      taskId: 'T-TEST',
      at: '2026-01-01T00:00:00.000Z',
    });
  }

  add(...events: TaskEvent[]): this {
    for (const event of events) {
      this.state = applyEvent(this.state, {
        ...event,
        seq: ++this.seq,
        taskId: 'T-TEST',
        at: '2026-01-01T00:00:01.000Z',
      });
    }
    return this;
  }

  /** Starts and completes a stage of an activation in one go. */
  stage(n: number, activation: string, agentId: string, output: string, input = ''): this {
    return this.add(
      { type: 'stage_started', stage: n, activation, agent: agentId, input, attempt: 1 },
      {
        type: 'stage_completed',
        stage: n,
        activation,
        agent: agentId,
        output,
        usage: { input_tokens: 1, output_tokens: 1 },
        durationMs: 1,
      },
    );
  }
}

/** The first event of a one-agent task, for the stores' tests. */
export const TASK_CREATED: EventOf<'task_created'> = {
  type: 'task_created',
  pipeline: 'p',
  pipelineFile: 'p.yaml',
  definition: pipeline(agent('a')),
  input: 'do it',
  startAgent: 'a',
  cwd: '/tmp',
  maxStages: 20,
  timeouts: {},
  gate: { model: null, timeout: 120, system_prompt: '' },
  script: null,
  parentTaskId: null,
  kind: 'run',
};
