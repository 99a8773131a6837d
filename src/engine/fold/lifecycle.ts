import { initialChunks } from '../../core/chunk.js';
import type { TaskEventType, TaskStatus } from '../../core/events.js';
import { startWith } from './activations.js';
import type { FoldedEventType, MailboxWait, Reducers, Stored, TaskState } from './types.js';

/** A task's life: made, started, resumed and restarted, ended; and its status on the way. */

/** The state a task starts in, from its `task_created`. */
export function initialState(event: Stored<'task_created'>): TaskState {
  const state: TaskState = {
    id: event.taskId,
    status: 'pending',
    pipeline: event.pipeline,
    pipelineFile: event.pipelineFile,
    definition: event.definition,
    input: event.input,
    startAgent: event.startAgent,
    cwd: event.cwd,
    maxStages: event.maxStages,
    timeouts: event.timeouts,
    gateConfig: event.gate,
    script: event.script,
    prices: event.prices ?? {},
    budgetWarned: false,
    routing: event.routing ?? null,
    labels: event.labels ?? [],
    forcedTier: event.tier ?? null,
    routes: {},
    parentTaskId: event.parentTaskId,
    issue: event.issue ?? null,
    createdAt: event.at,
    updatedAt: event.at,
    lastSeq: event.seq,
    activations: new Map(),
    stages: [],
    groups: new Map(),
    counters: { activation: 0, group: 0, lineage: 0 },
    gateRejections: {},
    gateCalls: {},
    humanAnswers: {},
    agentMeta: {},
    contextMd: '',
    agentNotes: {},
    transcript: '',
    isolation: null,
    workspace: null,
    size: null,
    spec: null,
    branchWorkspaces: new Map(),
    plan: null,
    verified: {},
    chunks: initialChunks(event.definition, event.at),
    mailFailures: [],
    usage: { input_tokens: 0, output_tokens: 0 },
    failure: null,
    cancelReason: null,
    cancelledAt: null,
    parked: null,
  };
  if (event.startAgent !== null) startWith(state, event.startAgent);
  return state;
}

/** The events that end a task: each sets its status, which is not derived afterwards. */
export const ENDS_TASK: ReadonlySet<TaskEventType> = new Set<FoldedEventType>([
  'task_completed',
  'task_failed',
  'task_cancelled',
]);

export const lifecycleReducers = {
  // `entry_point: auto`: the task starts once the router has picked its first agent
  entry_routed(state, event) {
    startWith(state, event.agent);
  },

  // a process took the task up: its status is derived again (a failed task runs on, a parked one too)
  task_resumed(state) {
    state.parked = null;
  },

  // the queue gave up on the task: it stays parked, whatever else is recorded, until resumed.
  // The stages its failed runs left open were cut off (the next take-up interrupts them in the
  // log and runs them again); a mailbox stage still waits for its reply.
  task_parked(state, event) {
    state.parked = { reason: event.reason, failures: event.failures, at: event.at };
    for (const stage of state.stages) {
      if (stage?.status !== 'running' || state.activations.get(stage.activation)?.mailbox) continue;
      stage.status = 'interrupted';
    }
  },

  // the store set the later events aside, so the fold never sees them: nothing to undo here
  task_restarted() {},

  task_completed(state) {
    state.status = 'completed';
  },

  task_failed(state, event) {
    state.status = 'failed';
    const stageHint = event.stage === null ? undefined : state.stages[event.stage - 1]?.error?.hint;
    state.failure = {
      reason: event.reason,
      stage: event.stage,
      errorKind: event.errorKind,
      hint: event.hint ?? stageHint ?? null,
    };
  },

  // nothing runs or waits after a cancel: the stages in flight end at it, and every wait is dropped
  task_cancelled(state, event) {
    state.status = 'cancelled';
    state.cancelReason = event.reason;
    state.cancelledAt = event.at;
    for (const stage of state.stages) {
      if (!stage) continue;
      stage.gateWaiting = false;
      if (stage.status !== 'running') continue;
      stage.status = 'cancelled';
      stage.finishedAt = event.at;
      stage.durationMs = Math.max(0, Date.parse(event.at) - Date.parse(stage.startedAt));
    }
    for (const activation of state.activations.values()) {
      if (activation.status === 'done') continue;
      if (activation.status === 'running' || activation.status === 'awaiting_human')
        activation.status = 'ready';
      activation.pendingQuestion = null;
      activation.waitingFor = null;
      activation.retryAt = null;
      activation.mailbox = null;
    }
  },
} satisfies Partial<Reducers>;

/** Whether the task is doing work, or which kind of person it waits for. */
export function deriveStatus(state: Readonly<TaskState>): TaskStatus {
  if (state.parked) return 'parked';
  let waitingGate = false;
  let waitingHuman = false;
  let waitingProvider = false;
  for (const a of state.activations.values()) {
    if (a.status === 'done') continue;
    if (a.status === 'awaiting_human') waitingHuman = true;
    else if (a.status === 'ready' && a.waitingFor) waitingProvider = true;
    else if (a.status === 'running' && a.mailbox && !a.mailbox.reply) waitingProvider = true;
    else if (a.status === 'settling' && a.stage !== null && state.stages[a.stage - 1]?.gateWaiting)
      waitingGate = true;
    else return 'running';
  }
  if (waitingProvider) return 'waiting';
  if (waitingGate) return 'awaiting_gate';
  if (waitingHuman) return 'awaiting_human_input';
  return 'running';
}

/** The mailbox agents' stages waiting for their reply on the bus (runtime mailbox). */
export function mailboxWaits(
  state: Readonly<TaskState>,
): Array<{ activation: string; agent: string } & MailboxWait> {
  const waits = [];
  for (const a of state.activations.values()) {
    if (a.status === 'running' && a.mailbox && !a.mailbox.reply)
      waits.push({ activation: a.id, agent: a.agent, ...a.mailbox });
  }
  return waits;
}

/** What a paused task waits for a person to do, if anything. */
export function waitingFor(
  state: Readonly<TaskState>,
): { kind: 'gate' | 'question'; agent: string; stage: number | null; questions: string[] } | null {
  const gate = state.stages.find((s) => s.gateWaiting);
  if (gate) return { kind: 'gate', agent: gate.agent, stage: gate.n, questions: [] };
  for (const a of state.activations.values()) {
    if (a.pendingQuestion) {
      return {
        kind: 'question',
        agent: a.agent,
        stage: a.pendingQuestion.stage,
        questions: a.pendingQuestion.questions,
      };
    }
  }
  return null;
}
