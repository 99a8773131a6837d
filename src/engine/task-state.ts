import type { Chunk } from '../core/chunk.js';
import type { SessionTurn, StageError, TaskEvent, TaskStatus, Usage } from '../core/events.js';
import { findNode, type Pipeline, type RuntimeName, type WorkspaceSettings } from '../core/pipeline.js';
import type { RoutingConfig } from '../core/routing.js';
import type { Effort } from '../core/runtime.js';
import type { Script } from '../core/script.js';
import type { SizeRecord, Spec } from '../core/spec.js';
import { DEFAULT_WORKTREE, type IsolationChoice } from '../pipeline/isolation.js';
import { formatAgentNotesSection, formatHumanSection, formatStageSection } from '../pipeline/lang/context.js';
import { initialChunks } from './chunks.js';
import {
  sessionEnded,
  sessionRoundEnded,
  sessionStarted,
  turnFailed,
  turnFinished,
} from './session-state.js';

/**
 * A task's state is a fold of its events: `foldEvents` for a whole log, `applyEvent` for one
 * more. Nothing here does I/O or reads a clock; times come from the events.
 */

export interface Branch {
  agent: string;
  stage: number;
  output: string;
  /** The payload that branch handed on. */
  input: string;
}

export interface Activation {
  /** a1, a2, … in the order the log created them (stable across replays). */
  id: string;
  agent: string;
  input: string;
  /** Fan-out membership: the group of parallel branches and this branch's lineage in it. */
  group: string | null;
  lineage: string | null;
  status: 'ready' | 'running' | 'settling' | 'awaiting_human' | 'done';
  /** The stage this activation runs as, once reserved by its first start. */
  stage: number | null;
  /** Attempts made at that stage (runtime retries). */
  attempts: number;
  retryAt: string | null;
  /** Answer to a `human_input: before` question, once given. */
  humanAnswer: string | null;
  /** A provider limit this activation waits out before its stage runs again. */
  waitingFor: { provider: string; until: string } | null;
  /** Set on the re-run that carries an on_demand answer: the agent does not ask `before` again. */
  continuation: boolean;
  pendingQuestion: {
    mode: 'before' | 'on_demand' | 'merge_conflict';
    questions: string[];
    stage: number | null;
  } | null;
  origin: { agent: string; stage: number } | null;
  branches: Branch[];
  /** A session node's progress through its rounds. */
  session: SessionProgress | null;
  /** A join: the fan-out lineages whose branch worktrees are merged before it runs. */
  joins: string[];
  /** A join whose merge conflicted: which branch, and whether its resolver (or a person) is done. */
  conflict: { branch: string; files: string[]; resolver: string | null; handled: boolean } | null;
  /** An `on_conflict` agent's activation: the join it resolves a conflict for. */
  resolves: string | null;
}

/** A lineage of a top-level fan-out working in its own worktree (docs/workspaces.md). */
export interface BranchWorkspace {
  lineage: string;
  agent: string;
  path: string;
  branch: string;
  start: string;
  /** The last commit on the branch the log knows (its start, or its last stage's commit). */
  head: string;
  /** Merged into its join's worktree, or integrated by hand after a conflict. */
  merged: boolean;
  resolved: boolean;
}

export interface SessionProgress {
  participants: string[];
  round: number;
  /** Who has spoken in this round, in order. */
  spoken: string[];
  /** The moderator's latest `NEXT: <id>` (moderated sessions). */
  next: string | null;
  phase: 'turns' | 'summary' | 'done';
  outcome: 'consensus' | 'no_consensus' | null;
  /** Each participant's latest turn: did it carry the vote keyword? */
  votes: Record<string, boolean>;
  lastMessage: string;
  summary: string | null;
  /** A turn's stage that was interrupted and runs again under the same number. */
  pendingStage: number | null;
}

export interface StageRecord {
  n: number;
  agent: string;
  activation: string;
  input: string;
  status: 'running' | 'completed' | 'failed' | 'interrupted';
  attempt: number;
  output: string;
  usage: Usage;
  durationMs: number;
  startedAt: string;
  finishedAt: string | null;
  gate: { decision: 'approved' | 'rejected'; reason: string; by: string } | null;
  gateWaiting: boolean;
  error: StageError | null;
  handedOff: boolean;
  turn: SessionTurn | null;
  /** The commit of what this stage changed, in the task's worktree. */
  commit: string | null;
}

export interface RoutedStage {
  tier: string;
  recommended: { tier: string; reason: string };
  runtime: string;
  model: string | null;
  effort: Effort | null;
}

export interface Group {
  id: string;
  parentGroup: string | null;
  parentLineage: string | null;
}

export interface TaskState {
  id: string;
  status: TaskStatus;
  pipeline: string;
  pipelineFile: string;
  definition: Pipeline;
  input: string;
  startAgent: string | null;
  cwd: string;
  maxStages: number;
  timeouts: Record<string, number>;
  gateConfig: { model: string | null; timeout: number; system_prompt: string; runtime?: RuntimeName | null };
  script: Script | null;
  prices: Record<string, { input: number; output: number }>;
  /** A budget_warning has been recorded. */
  budgetWarned: boolean;
  /** Config routing when the task started, its labels and `--tier`. */
  routing: RoutingConfig | null;
  labels: string[];
  forcedTier: string | null;
  /** The tier each routed stage runs on (kept, so a stage run again is not routed again). */
  routes: Record<number, RoutedStage>;
  parentTaskId: string | null;
  createdAt: string;
  updatedAt: string;
  lastSeq: number;
  activations: Map<string, Activation>;
  stages: StageRecord[];
  groups: Map<string, Group>;
  counters: { activation: number; group: number; lineage: number };
  /** Rejections by each agent's automated (llm/command) gate in this task. */
  gateRejections: Record<string, number>;
  /** Automated gate decisions made so far per agent (the scripted runtime's place). */
  gateCalls: Record<string, number>;
  /** Human answers given per agent (the script's place in `human:`). */
  humanAnswers: Record<string, number>;
  /** `meta` left by each runtime call, per agent (the scripted runtime's place). */
  agentMeta: Record<string, Record<string, string | number | boolean>[]>;
  /** context.md as written so far, and each agent's own notes. */
  contextMd: string;
  agentNotes: Record<string, string>;
  /** The task's chunks (chunks.json), when its pipeline uses them. */
  chunks: Chunk[];
  /** Where a task of a pipeline without `workspace:` chose to work, and why. */
  isolation: IsolationChoice | null;
  /** The task's git worktree, once it has one; `head`: the last commit on its branch the log knows. */
  workspace: {
    path: string;
    branch: string;
    base: string;
    repo: string;
    merged: string | null;
    head?: string | null;
    /** Why `merge: on_complete` did not merge the branch into base. */
    notMerged?: string | null;
  } | null;
  /** The task's size, once someone set it (the latest wins). */
  size: SizeRecord | null;
  /** The latest valid spec (`spec: required`) and the stage that wrote it. */
  spec: { stage: number; agent: string; spec: Spec } | null;
  /** Fan-out branches in worktrees of their own, by lineage. */
  branchWorkspaces: Map<string, BranchWorkspace>;
  /** Verifiers' verdicts by commit. */
  verified: Record<string, 'approved' | 'rejected'>;
  /** transcript.md of the latest session. */
  transcript: string;
  usage: Usage;
  failure: { reason: string; stage: number | null; errorKind: string | null } | null;
  cancelReason: string | null;
}

export type TimedEvent = TaskEvent & { seq: number; taskId: string; at: string };

export function foldEvents(events: Iterable<TimedEvent>): TaskState {
  let state: TaskState | undefined;
  for (const event of events) state = applyEvent(state, event);
  if (!state) throw new Error('a task log must start with task_created');
  return state;
}

export function applyEvent(state: TaskState | undefined, event: TimedEvent): TaskState {
  if (event.type === 'task_created') return created(event);
  if (!state) throw new Error(`event ${event.type} before task_created`);
  state.lastSeq = event.seq;
  state.updatedAt = event.at;
  switch (event.type) {
    case 'entry_routed':
      startWith(state, event.agent);
      break;
    case 'task_resumed':
    case 'task_restarted':
    case 'stage_output':
      break;
    case 'stage_started': {
      const activation = must(state, event.activation);
      activation.status = 'running';
      activation.waitingFor = null;
      activation.retryAt = null;
      if (event.turn) activation.session!.pendingStage = event.stage;
      else {
        activation.stage = event.stage;
        activation.attempts = event.attempt;
      }
      state.stages[event.stage - 1] = {
        n: event.stage,
        agent: event.agent,
        activation: event.activation,
        input: event.input,
        status: 'running',
        attempt: event.attempt,
        output: '',
        usage: { input_tokens: 0, output_tokens: 0 },
        durationMs: 0,
        startedAt: event.at,
        finishedAt: null,
        gate: null,
        gateWaiting: false,
        error: null,
        handedOff: false,
        turn: event.turn ?? null,
        commit: null,
      };
      break;
    }
    case 'stage_completed': {
      const stage = stageOf(state, event.stage);
      stage.status = 'completed';
      stage.output = event.output;
      stage.usage = event.usage;
      stage.durationMs = event.durationMs;
      stage.finishedAt = event.at;
      stage.error = null;
      addUsage(state.usage, event.usage);
      if (event.meta) rememberMeta(state, event.agent, event.meta);
      if (stage.turn) turnFinished(state, must(state, event.activation), stage);
      else must(state, event.activation).status = 'settling';
      break;
    }
    case 'stage_attempt_failed': {
      const stage = stageOf(state, event.stage);
      stage.status = 'failed';
      stage.error = event.error;
      stage.output = event.partialOutput;
      stage.finishedAt = event.at;
      if (event.meta) rememberMeta(state, event.agent, event.meta);
      if (stage.turn) {
        turnFailed(state, must(state, event.activation), stage);
        break;
      }
      const activation = must(state, event.activation);
      activation.status = 'ready';
      activation.retryAt = event.retryAt ?? null;
      break;
    }
    case 'rate_limited': {
      const stage = stageOf(state, event.stage);
      stage.status = 'interrupted';
      stage.error = { kind: 'rate_limited', message: event.message };
      if (event.meta) rememberMeta(state, event.agent, event.meta);
      const activation = must(state, event.activation);
      activation.status = 'ready';
      activation.retryAt = event.retryAt ?? event.resetAt;
      activation.waitingFor = { provider: event.provider, until: event.retryAt ?? event.resetAt };
      if (!stage.turn) activation.attempts = Math.max(0, activation.attempts - 1);
      break;
    }
    case 'stage_interrupted': {
      const stage = stageOf(state, event.stage);
      stage.status = 'interrupted';
      const activation = must(state, event.activation);
      activation.status = 'ready';
      if (stage.turn) break;
      // an interrupted attempt is not a failed one: it does not use up a retry
      activation.attempts = Math.max(0, activation.attempts - 1);
      break;
    }
    case 'gate_waiting':
      stageOf(state, event.stage).gateWaiting = true;
      break;
    case 'gate_decided': {
      const stage = stageOf(state, event.stage);
      stage.gate = { decision: event.decision, reason: event.reason, by: event.by };
      stage.gateWaiting = false;
      if (event.by === 'human') {
        state.humanAnswers[event.agent] = (state.humanAnswers[event.agent] ?? 0) + 1;
      } else {
        state.gateCalls[event.agent] = (state.gateCalls[event.agent] ?? 0) + 1;
        if (event.decision === 'rejected') {
          state.gateRejections[event.agent] = (state.gateRejections[event.agent] ?? 0) + 1;
        }
      }
      break;
    }
    case 'human_input_requested': {
      const activation = must(state, event.activation);
      activation.status = 'awaiting_human';
      activation.pendingQuestion = { mode: event.mode, questions: event.questions, stage: event.stage };
      if (event.stage !== null)
        recordStageInContext(state, stageOf(state, event.stage), 'awaiting_human_input');
      break;
    }
    case 'human_input_given':
      answerGiven(state, event, event.at);
      break;
    case 'handoff':
      handedOff(state, event);
      break;
    case 'join':
      joined(state, event);
      break;
    case 'session_started':
      sessionStarted(state, must(state, event.activation), event);
      break;
    case 'session_round_ended':
      sessionRoundEnded(state, must(state, event.activation), event);
      break;
    case 'session_ended': {
      const activation = must(state, event.activation);
      sessionEnded(activation, event);
      state.stages[event.stage - 1] = {
        n: event.stage,
        agent: event.session,
        activation: event.activation,
        input: activation.input,
        status: 'completed',
        attempt: 1,
        output: event.output,
        usage: { input_tokens: 0, output_tokens: 0 },
        durationMs: 0,
        startedAt: event.at,
        finishedAt: event.at,
        gate: null,
        gateWaiting: false,
        error: null,
        handedOff: false,
        turn: null,
        commit: null,
      };
      activation.stage = event.stage;
      activation.status = 'settling';
      break;
    }
    case 'isolation_chosen':
      state.isolation = { isolation: event.isolation, reason: event.reason };
      break;
    case 'workspace_ready':
      state.workspace = {
        path: event.path,
        branch: event.branch,
        base: event.base,
        repo: event.repo,
        merged: null,
      };
      state.cwd = event.path;
      break;
    case 'workspace_committed':
      stageOf(state, event.stage).commit = event.sha;
      if (event.branch) {
        const ws = [...state.branchWorkspaces.values()].find((b) => b.branch === event.branch);
        if (ws) ws.head = event.sha;
      } else if (state.workspace) state.workspace.head = event.sha;
      break;
    case 'branch_workspace_ready':
      state.branchWorkspaces.set(event.lineage, {
        lineage: event.lineage,
        agent: event.agent,
        path: event.path,
        branch: event.branch,
        start: event.start,
        head: event.start,
        merged: false,
        resolved: false,
      });
      break;
    case 'branches_merged':
    case 'branch_conflict':
      branchesMerged(state, event);
      break;
    case 'conflict_handled': {
      const join = must(state, event.activation);
      if (join.conflict) join.conflict.handled = true;
      const resolver = must(state, event.resolver);
      resolver.status = 'done';
      const stage = stageOf(state, event.stage);
      stage.handedOff = true;
      recordStageInContext(state, stage, stage.gate?.decision ?? 'completed');
      break;
    }
    case 'workspace_merged':
      if (state.workspace) state.workspace.merged = event.sha;
      break;
    case 'workspace_conflict':
      if (state.workspace) state.workspace.notMerged = `conflict in ${event.files.join(', ')}`;
      break;
    case 'workspace_merge_failed':
      if (state.workspace) state.workspace.notMerged = event.reason;
      break;
    case 'decision':
      if (event.kind === 'route') {
        state.routes[event.stage] = {
          tier: event.tier,
          recommended: event.recommended,
          runtime: event.runtime,
          model: event.model,
          effort: event.effort,
        };
      }
      break;
    case 'verified':
      if (event.sha) state.verified[event.sha] = event.decision;
      break;
    case 'budget_warning':
      state.budgetWarned = true;
      break;
    case 'task_sized':
      state.size = { size: event.size, by: event.by };
      break;
    case 'spec_recorded':
      state.spec = { stage: event.stage, agent: event.agent, spec: event.spec };
      break;
    case 'output_rejected': {
      // a gate rejection by troupe itself: it counts toward max_retries, not the script's gate place
      const stage = stageOf(state, event.stage);
      stage.gate = { decision: 'rejected', reason: event.reason, by: event.check };
      state.gateRejections[event.agent] = (state.gateRejections[event.agent] ?? 0) + 1;
      break;
    }
    case 'chunk_added':
      state.chunks.push({ ...event.chunk });
      break;
    case 'chunk_updated': {
      const chunk = state.chunks.find((c) => c.id === event.id);
      if (chunk) {
        chunk.status = event.status;
        chunk.updated_at = event.at;
        chunk.completed_by = event.status === 'done' ? event.by : null;
      }
      break;
    }
    case 'chunk_removed':
      state.chunks = state.chunks.filter((c) => c.id !== event.id);
      break;
    case 'task_completed':
      state.status = 'completed';
      return state;
    case 'task_failed':
      state.status = 'failed';
      state.failure = { reason: event.reason, stage: event.stage, errorKind: event.errorKind };
      return state;
    case 'task_cancelled':
      state.status = 'cancelled';
      state.cancelReason = event.reason;
      return state;
  }
  state.status = deriveStatus(state);
  return state;
}

function created(event: Extract<TimedEvent, { type: 'task_created' }>): TaskState {
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
    verified: {},
    chunks: initialChunks(event.definition, event.at),
    usage: { input_tokens: 0, output_tokens: 0 },
    failure: null,
    cancelReason: null,
  };
  if (event.startAgent !== null) startWith(state, event.startAgent);
  return state;
}

function startWith(state: TaskState, agent: string): void {
  state.startAgent = agent;
  addActivation(state, { agent, input: state.input, group: null, lineage: null, origin: null });
}

/** Whether the task is doing work, or which kind of person it waits for. */
function deriveStatus(state: TaskState): TaskStatus {
  let waitingGate = false;
  let waitingHuman = false;
  let waitingProvider = false;
  for (const a of state.activations.values()) {
    if (a.status === 'done') continue;
    if (a.status === 'awaiting_human') waitingHuman = true;
    else if (a.status === 'ready' && a.waitingFor) waitingProvider = true;
    else if (a.status === 'settling' && a.stage !== null && state.stages[a.stage - 1]?.gateWaiting)
      waitingGate = true;
    else return 'running';
  }
  if (waitingProvider) return 'waiting';
  if (waitingGate) return 'awaiting_gate';
  if (waitingHuman) return 'awaiting_human_input';
  return 'running';
}

function answerGiven(
  state: TaskState,
  event: Extract<TimedEvent, { type: 'human_input_given' }>,
  at: string,
) {
  const activation = must(state, event.activation);
  const question = activation.pendingQuestion;
  activation.pendingQuestion = null;
  state.humanAnswers[activation.agent] = (state.humanAnswers[activation.agent] ?? 0) + 1;
  const exchange = formatHumanSection({
    agent: activation.agent,
    questions: question?.questions ?? [],
    answer: event.answer,
    at,
  });
  state.contextMd += exchange;
  state.agentNotes[activation.agent] = (state.agentNotes[activation.agent] ?? '') + exchange;
  if (question?.mode === 'merge_conflict') {
    // the person resolved it in the worktree: the join commits what they left and merges the rest
    if (activation.conflict) activation.conflict.handled = true;
    activation.status = 'ready';
    return;
  }
  if (!question || question.mode === 'before') {
    activation.humanAnswer = event.answer;
    activation.status = 'ready';
    return;
  }
  // on_demand: the same agent carries on with its questions, the answer and what it wrote
  activation.status = 'done';
  const stage = question.stage === null ? undefined : state.stages[question.stage - 1];
  const input = [
    stage?.input ?? activation.input,
    '',
    "--- Agent's Questions ---",
    ...question.questions.map((q) => `- ${q}`),
    '',
    '--- User Response ---',
    event.answer,
    '',
    '--- Previous Agent Output ---',
    stage?.output ?? '',
    '',
    "Continue based on the user's response.",
  ].join('\n');
  const next = addActivation(state, {
    agent: activation.agent,
    input,
    group: activation.group,
    lineage: activation.lineage,
    origin: activation.origin,
  });
  next.continuation = true;
}

function handedOff(state: TaskState, event: Extract<TimedEvent, { type: 'handoff' }>) {
  const activation = must(state, event.activation);
  const stage = stageOf(state, event.stage);
  stage.handedOff = true;
  activation.status = 'done';
  recordStageInContext(state, stage, stage.gate?.decision ?? 'completed');
  const origin = { agent: stage.agent, stage: stage.n };
  if (event.targets.length === 1) {
    const [target] = event.targets;
    const next = addActivation(state, {
      agent: target!.agent,
      input: target!.input,
      group: activation.group,
      lineage: activation.lineage,
      origin,
    });
    // a gate sending work back to the same agent continues it: no second `before` question
    next.continuation = target!.condition === 'gate_retry';
  } else if (event.targets.length > 1) {
    const group = `g${++state.counters.group}`;
    state.groups.set(group, { id: group, parentGroup: activation.group, parentLineage: activation.lineage });
    for (const target of event.targets) {
      const lineage = `l${++state.counters.lineage}`;
      addActivation(state, { agent: target.agent, input: target.input, group, lineage, origin });
    }
  }
}

function joined(state: TaskState, event: Extract<TimedEvent, { type: 'join' }>) {
  const parts = event.activations.map((id) => must(state, id));
  const first = parts[0]!;
  for (const part of parts) part.status = 'done';
  const branches: Branch[] = parts.map((part) => ({
    agent: part.origin?.agent ?? '',
    stage: part.origin?.stage ?? 0,
    output: part.origin ? (state.stages[part.origin.stage - 1]?.output ?? '') : '',
    input: part.input,
  }));
  const input = branches.map((b) => `## from ${b.agent} (stage ${b.stage})\n\n${b.input}`).join('\n\n');
  // the join closes the fan-out when no other branch of it is still going
  const group = first.group ? state.groups.get(first.group) : undefined;
  const othersActive = [...state.activations.values()].some(
    (a) => a.status !== 'done' && group !== undefined && lineageIn(state, a, group.id) !== null,
  );
  const placement =
    group && !othersActive
      ? { group: group.parentGroup, lineage: group.parentLineage }
      : { group: first.group, lineage: first.lineage };
  const next = addActivation(state, { agent: event.agent, input, ...placement, origin: first.origin });
  next.branches = branches;
  next.joins = [...new Set(parts.map((p) => branchLineage(state, p)).filter((l) => l !== null))];
}

/** The lineage of the top-level fan-out an activation works in (its branch worktree), or null. */
export function branchLineage(
  state: TaskState,
  activation: Pick<Activation, 'group' | 'lineage'>,
): string | null {
  let group = activation.group;
  let lineage = activation.lineage;
  while (group !== null) {
    const g = state.groups.get(group);
    if (!g || g.parentGroup === null) return lineage;
    group = g.parentGroup;
    lineage = g.parentLineage;
  }
  return null;
}

function branchesMerged(
  state: TaskState,
  event: Extract<TimedEvent, { type: 'branches_merged' } | { type: 'branch_conflict' }>,
) {
  const byBranch = new Map([...state.branchWorkspaces.values()].map((b) => [b.branch, b]));
  const merged = event.type === 'branches_merged' ? event.branches : event.merged;
  for (const branch of merged) {
    const ws = byBranch.get(branch);
    if (ws) ws.merged = true;
  }
  if (event.resolved) {
    const ws = byBranch.get(event.resolved);
    if (ws) ws.resolved = true;
  }
  if (event.into === null) {
    if (state.workspace) state.workspace.head = event.head;
  } else {
    const into = state.branchWorkspaces.get(event.into);
    if (into) into.head = event.head;
  }
  const join = event.activation ? must(state, event.activation) : null;
  if (!join) return;
  if (event.type === 'branches_merged') {
    join.conflict = null;
    return;
  }
  join.conflict = { branch: event.branch, files: event.files, resolver: event.resolver, handled: false };
  if (event.resolver) {
    const resolver = addActivation(state, {
      agent: event.resolver,
      input: conflictInput(state, event),
      group: join.group,
      lineage: join.lineage,
      origin: join.origin,
    });
    resolver.resolves = join.id;
  }
}

/** What an `on_conflict` agent is told: the branch, the files, and where to work. */
export function conflictInput(
  state: TaskState,
  conflict: { branch: string; files: string[]; into: string | null },
): string {
  const into =
    conflict.into === null ? state.workspace?.branch : state.branchWorkspaces.get(conflict.into)?.branch;
  return [
    `Merging branch ${conflict.branch} into ${into ?? 'the task branch'} conflicts in:`,
    ...conflict.files.map((f) => `- ${f}`),
    '',
    'The merge was aborted: nothing was overwritten, and the branch keeps its commits.',
    `You work in the worktree of ${into ?? 'the task branch'}. Integrate the branch's change: for example`,
    `\`git merge ${conflict.branch}\`, resolve the conflicts and commit, or re-apply its change by hand.`,
    'troupe commits what you leave when your stage ends, then merges the remaining branches.',
    '',
    'Task:',
    state.input,
  ].join('\n');
}

export function recordStageInContext(state: TaskState, stage: StageRecord, status: string) {
  const node = findNode(state.definition, stage.agent);
  const taskName = node?.type === 'session' ? 'session' : node?.handoffs[0]?.task || 'execute';
  const at = stage.finishedAt ?? stage.startedAt;
  const section = {
    n: stage.n,
    agent: stage.agent,
    taskName,
    status,
    input: stage.input,
    output: stage.output,
    at,
    ...(stage.gate?.decision === 'rejected' && stage.gate.reason ? { rejectReason: stage.gate.reason } : {}),
  };
  state.contextMd += formatStageSection(section);
  state.agentNotes[stage.agent] =
    (state.agentNotes[stage.agent] ?? '') + formatAgentNotesSection(stage.n, at, stage.output);
}

function addActivation(
  state: TaskState,
  init: Pick<Activation, 'agent' | 'input' | 'group' | 'lineage' | 'origin'>,
): Activation {
  const activation: Activation = {
    id: `a${++state.counters.activation}`,
    ...init,
    status: 'ready',
    stage: null,
    attempts: 0,
    retryAt: null,
    humanAnswer: null,
    continuation: false,
    pendingQuestion: null,
    branches: [],
    session: null,
    waitingFor: null,
    joins: [],
    conflict: null,
    resolves: null,
  };
  state.activations.set(activation.id, activation);
  return activation;
}

/**
 * The lineage of `group` that an activation belongs to, directly or through nested fan-outs;
 * null when it is not inside that group.
 */
export function lineageIn(state: TaskState, activation: Activation, group: string): string | null {
  let currentGroup = activation.group;
  let currentLineage = activation.lineage;
  while (currentGroup !== null) {
    if (currentGroup === group) return currentLineage;
    const parent = state.groups.get(currentGroup);
    if (!parent) return null;
    currentGroup = parent.parentGroup;
    currentLineage = parent.parentLineage;
  }
  return null;
}

function must(state: TaskState, id: string): Activation {
  const activation = state.activations.get(id);
  if (!activation) throw new Error(`task ${state.id}: unknown activation ${id}`);
  return activation;
}

function stageOf(state: TaskState, n: number): StageRecord {
  const stage = state.stages[n - 1];
  if (!stage) throw new Error(`task ${state.id}: unknown stage ${n}`);
  return stage;
}

function rememberMeta(state: TaskState, agent: string, meta: Record<string, string | number | boolean>) {
  const list = state.agentMeta[agent] ?? [];
  list.push(meta);
  state.agentMeta[agent] = list;
}

function addUsage(total: Usage, add: Usage) {
  total.input_tokens += add.input_tokens;
  total.output_tokens += add.output_tokens;
  if (add.cost_usd !== undefined) total.cost_usd = (total.cost_usd ?? 0) + add.cost_usd;
}

/** The task's workspace settings: its pipeline's, else the default worktree it chose at start. */
export function workspaceSettings(state: TaskState): WorkspaceSettings | null {
  if (state.definition.workspace) return state.definition.workspace;
  return state.isolation?.isolation === 'worktree' ? DEFAULT_WORKTREE : null;
}

export function openActivations(state: TaskState): Activation[] {
  return [...state.activations.values()].filter((a) => a.status !== 'done');
}

/** What a paused task waits for a person to do, if anything. */
export function waitingFor(
  state: TaskState,
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
