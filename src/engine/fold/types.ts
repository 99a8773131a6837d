import type { Chunk } from '../../core/chunk.js';
import type {
  Decider,
  EventOf,
  SessionTurn,
  StageError,
  StoredEvent,
  TaskEventType,
  TaskStatus,
} from '../../core/events.js';
import type { Pipeline } from '../../core/pipeline.js';
import type { Effort } from '../../core/pipeline-vocabulary.js';
import type { PlanPiece } from '../../core/plan.js';
import type { RoutingConfig } from '../../core/routing.js';
import type { Script } from '../../core/script.js';
import type { SizeRecord, Spec } from '../../core/spec.js';
import type { TaskIssueRef } from '../../core/tracker.js';
import type { Usage } from '../../core/usage.js';
import type { IsolationChoice } from '../../pipeline/isolation.js';

/** The shape of a folded task, and of the reducers that fold one event each into it. */

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
  /** A mailbox agent's stage waiting for its reply on the bus (runtime mailbox), and the reply once taken. */
  mailbox: MailboxWait | null;
  /** The planner's activation that runs a plan's graph and merges its pieces: the plan's round. */
  integrates: number | null;
}

export interface MailboxWait {
  stage: number;
  handle: string;
  thread: string;
  askedAt: string;
  deadline: string | null;
  reply: { from: string; body: string } | null;
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

/** A plan's piece as the task knows it (docs/task-graphs.md). */
export interface PieceState extends PlanPiece {
  /** The lineage its activations work in (its worktree's). */
  lineage: string;
  /** The plan round it came from. */
  round: number;
  started: boolean;
  failure: { reason: string; stage: number | null } | null;
  /** Files its branch changed outside its paths (found before its merge). */
  outside: string[];
}

/** A task's plan, once its planner wrote one that validated. */
export interface PlanState {
  /** The planner agent and the stage that wrote the current round's plan. */
  planner: string;
  stage: number;
  round: number;
  /** The fan-out groups the rounds' pieces work in. */
  groups: string[];
  /** The activation that runs the current round's graph. */
  integration: string;
  /** Every round's pieces: a re-plan keeps those already merged and replaces the rest. */
  pieces: Map<string, PieceState>;
  warnings: string[];
  replans: number;
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
  /** `cancelled`: the task was cancelled while the stage ran (it ends at the cancel). */
  status: 'running' | 'completed' | 'failed' | 'interrupted' | 'cancelled';
  attempt: number;
  output: string;
  usage: Usage;
  durationMs: number;
  startedAt: string;
  finishedAt: string | null;
  gate: { decision: 'approved' | 'rejected'; reason: string; by: string; from?: Decider } | null;
  gateWaiting: boolean;
  error: StageError | null;
  handedOff: boolean;
  turn: SessionTurn | null;
  /** The commit of what this stage changed, in the task's worktree. */
  commit: string | null;
  /** stage_warning messages, in order. */
  warnings: string[];
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

export interface MailFailure {
  to: string;
  kind: string;
  subject: string;
  reason: string;
  at: string;
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
  gateConfig: EventOf<'task_created'>['gate'];
  script: Script | null;
  prices: Record<string, { input: number; output: number; cached_input?: number }>;
  /** A budget_warning has been recorded. */
  budgetWarned: boolean;
  /** Config routing when the task started, its labels and `--tier`. */
  routing: RoutingConfig | null;
  labels: string[];
  forcedTier: string | null;
  /** The tier each routed stage runs on (kept, so a stage run again is not routed again). */
  routes: Record<number, RoutedStage>;
  parentTaskId: string | null;
  /** The tracker issue the task works on (`troupe watch`), or null. */
  issue: TaskIssueRef | null;
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
  /** Mail the task wrote that was not delivered (`mail_failed`), oldest first. */
  mailFailures: MailFailure[];
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
    /** Its worktree and branch were removed once merged (`workspace_removed`). */
    removed?: boolean;
  } | null;
  /** The task's size, once someone set it (the latest wins). */
  size: SizeRecord | null;
  /** The latest valid spec (`spec: required`) and the stage that wrote it. */
  spec: { stage: number; agent: string; spec: Spec } | null;
  /** Fan-out branches in worktrees of their own, by lineage. */
  branchWorkspaces: Map<string, BranchWorkspace>;
  /** The planner's plan and its pieces, once one validated. */
  plan: PlanState | null;
  /** Verifiers' verdicts by commit. */
  verified: Record<string, 'approved' | 'rejected'>;
  /** transcript.md of the latest session. */
  transcript: string;
  usage: Usage;
  /** `hint`: what the user can do about it (the failed stage's error hint, or the task's own). */
  failure: { reason: string; stage: number | null; errorKind: string | null; hint: string | null } | null;
  cancelReason: string | null;
  /** Parked after its wake-ups kept failing (task_parked), until a person resumes it. */
  parked: { reason: string; failures: number; at: string } | null;
  /** When the task was cancelled (its `task_cancelled` event's time). */
  cancelledAt: string | null;
}

/** A stored event of type `T`, as the fold receives it. */
export type Stored<T extends TaskEventType> = EventOf<T> & Pick<StoredEvent, 'seq' | 'taskId' | 'at'>;

/** Every event type but `task_created`, which makes the state the others change. */
export type FoldedEventType = Exclude<TaskEventType, 'task_created'>;

/**
 * How one type of event changes a task's state: in place (the fold copies nothing). The fold
 * derives the task's status after it, unless the event ends the task (lifecycle.ts).
 */
export type Reducer<T extends FoldedEventType> = (state: TaskState, event: Stored<T>) => void;

/**
 * One reducer per event type, so a table that misses a type does not compile: a new event is
 * handled, or ignored on purpose, never by accident.
 */
export type Reducers = { [T in FoldedEventType]: Reducer<T> };
