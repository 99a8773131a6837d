import { join } from 'node:path';
import { NotFoundError, StateError, UsageError } from '../errors.js';
import type { ProjectConfig } from '../pipeline/config.js';
import { type AgentNode, findNode, type Pipeline } from '../pipeline/types.js';
import { runtimeFor } from '../runtimes/registry.js';
import { loadScript, type Script } from '../runtimes/script.js';
import type { EventStore } from '../store/event-store.js';
import { TaskFiles } from '../store/task-files.js';
import type { TaskEvent } from './events.js';
import { type ExecutorPorts, type HumanResponder, type RunObserver, runTask } from './execute.js';
import { foldEvents, type TaskState } from './task-state.js';

/**
 * What every front end (CLI, HTTP API) does with tasks: start, continue, answer, cancel.
 * One place, so the CLI and the server behave the same.
 */
export class TaskService {
  private readonly configScript: Script | null;

  constructor(
    readonly root: string,
    readonly store: EventStore,
    readonly config: ProjectConfig,
  ) {
    this.configScript = config.script ? loadScript(join(root, config.script)) : null;
  }

  start(options: {
    pipeline: Pipeline;
    input: string;
    agent?: string;
    script?: Script | null;
    cwd?: string;
    parentTaskId?: string | null;
    kind?: 'run' | 'fix';
  }): string {
    const { pipeline } = options;
    const startAgent = options.agent ?? pipeline.agents[0]?.id;
    if (!startAgent || !findNode(pipeline, startAgent)) {
      throw new NotFoundError(`no agent '${options.agent}' in pipeline ${pipeline.name}`, {
        hint: `agents: ${pipeline.agents.map((a) => a.id).join(', ')}`,
      });
    }
    const event: Extract<TaskEvent, { type: 'task_created' }> = {
      type: 'task_created',
      pipeline: pipeline.name,
      pipelineFile: pipeline.file,
      definition: pipeline,
      input: options.input,
      startAgent,
      cwd: options.cwd ?? this.root,
      maxStages: this.config.pipeline.max_stages,
      timeouts: this.config.timeouts,
      gate: this.config.gate,
      script: options.script ?? null,
      parentTaskId: options.parentTaskId ?? null,
      kind: options.kind ?? 'run',
    };
    return this.store.createTask(event).taskId;
  }

  /** Runs the task in this process until it ends or waits for a person. */
  continue(taskId: string, observer?: RunObserver): Promise<TaskState> {
    this.mustExist(taskId);
    const ports: ExecutorPorts = {
      store: this.store,
      files: TaskFiles.forTask(this.root, taskId),
      runtimeFor: (state: TaskState, node: AgentNode) =>
        runtimeFor(node.runtime, state.script, this.configScript),
      human: scriptedHuman,
      ...(observer ? { observer } : {}),
    };
    return runTask(taskId, ports);
  }

  state(taskId: string): TaskState {
    this.mustExist(taskId);
    return foldEvents(this.store.events(taskId));
  }

  /** A person's verdict on a task waiting at a human gate. */
  decideGate(taskId: string, decision: 'approved' | 'rejected', reason: string): void {
    const state = this.state(taskId);
    const waiting = state.stages.find((s) => s.gateWaiting);
    if (!waiting) throw new StateError(`task ${taskId} is not waiting at a gate (status: ${state.status})`);
    if (decision === 'rejected' && !reason.trim())
      throw new UsageError('a rejection needs a reason (-r "why")');
    this.store.append(
      taskId,
      [{ type: 'gate_decided', stage: waiting.n, agent: waiting.agent, decision, reason, by: 'human' }],
      { status: 'running' },
    );
  }

  /** A person's answer to a question an agent (or `human_input: before`) asked. */
  answer(taskId: string, answer: string): void {
    const state = this.state(taskId);
    const asking = [...state.activations.values()].find((a) => a.pendingQuestion !== null);
    if (!asking)
      throw new StateError(`task ${taskId} is not waiting for an answer (status: ${state.status})`);
    this.store.append(taskId, [{ type: 'human_input_given', activation: asking.id, answer, by: 'human' }], {
      status: 'running',
    });
  }

  cancel(taskId: string, reason: string): void {
    const state = this.state(taskId);
    if (state.status === 'completed' || state.status === 'failed' || state.status === 'cancelled') {
      throw new StateError(`task ${taskId} has already ended (${state.status})`);
    }
    this.store.append(taskId, [{ type: 'task_cancelled', reason }], { status: 'cancelled' });
  }

  private mustExist(taskId: string): void {
    if (!this.store.task(taskId)) throw new NotFoundError(`no task ${taskId}`, { hint: 'see `troupe list`' });
  }
}

/** Answers from the task's own script (`human:`), in order; none without a script. */
function scriptedHuman(state: TaskState): HumanResponder {
  return {
    answer(agent, index) {
      const answers = state.script?.human[agent];
      return answers?.[index];
    },
  };
}
