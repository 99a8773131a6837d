import type { Chunk, ChunkStatus } from './chunk.js';
import type { Pipeline, RuntimeName } from './pipeline.js';
import type { Effort } from './pipeline-vocabulary.js';
import type { PlanPiece } from './plan.js';
import type { RoutingConfig } from './routing.js';
import type { RuntimeErrorKind } from './runtime.js';
import type { Script } from './script.js';
import type { Spec, TaskSize } from './spec.js';
import type { StrayCommit } from './task-workspace.js';
import type { TaskIssueRef } from './tracker.js';
import type { Usage } from './usage.js';

/**
 * Every change to a task is one of these events, appended to the store. Task state is a
 * fold of them (task-state.ts); the files under .troupe/tasks/<id>/ and the live streams
 * are written from them too. Add a field rather than change one: old logs must still fold.
 */

export interface StageError {
  kind: RuntimeErrorKind;
  message: string;
  /** What the user can do about it (a RuntimeError's hint), where the runtime knows. */
  hint?: string;
}

/** Why a task failed when no runtime error says it (a runtime error's kind says it otherwise). */
export type TaskFailureKind =
  /** The task's worktree or branch could not be made, prepared or merged. */
  | 'workspace'
  /** A prompt or payload template did not render. */
  | 'template_error'
  /** The task would run more stages than its `max_stages`. */
  | 'max_stages'
  /** The task's budget (tokens or USD) is spent. */
  | 'budget'
  /** A session ended without consensus and has no `on_no_consensus` handoff. */
  | 'no_consensus'
  /** An agent produced the same output three times in a row. */
  | 'runaway'
  /** A gate, spec or output_schema kept rejecting past `max_retries`. */
  | 'gate_rejected'
  /** The final commit was rejected by its verifier. */
  | 'verification'
  /** A fan-out branch conflicted on its merge and no agent resolves conflicts. */
  | 'merge_conflict'
  /** A plan's pieces failed and its planner has no re-plan left (docs/task-graphs.md). */
  | 'pieces_failed'
  /** A routed agent (model or effort auto), and the config has no routing tiers. */
  | 'routing_unavailable';

/** `task_failed.errorKind`: a runtime error's kind, or one of the task's own failures. */
export type TaskErrorKind = RuntimeErrorKind | TaskFailureKind;

export interface SessionTurn {
  round: number;
  /** The summary agent's closing turn, after consensus. */
  summary: boolean;
}

/**
 * Where a person's decision came from: a terminal (`cli`: the OS user and host), the HTTP API or
 * the dashboard (the token's holder), or a reply on the bus (`mail`: the mailbox it came from,
 * which no one authenticates: accepted for gates only where the project allows it).
 */
export interface Decider {
  channel: 'cli' | 'api' | 'dashboard' | 'mail';
  who: string;
}

/** A process found running for a task whose owner had died, and ended. */
export interface LeftoverProcess {
  pid: number;
  command: string;
}

/** A conflicting file as the worktree has it (`ours`) and as the branch has it (`theirs`); null: absent. */
export interface ConflictSide {
  file: string;
  ours: string | null;
  theirs: string | null;
}

export interface HandoffTarget {
  agent: string;
  input: string;
  condition: string;
}

export type TaskEvent =
  | {
      type: 'task_created';
      pipeline: string;
      pipelineFile: string;
      /** The resolved pipeline, so any process continues the task exactly as it was started. */
      definition: Pipeline;
      input: string;
      /** null: `entry_point: auto` — a router picks the first agent (event entry_routed). */
      startAgent: string | null;
      cwd: string;
      maxStages: number;
      /** Seconds per runtime, from config timeouts. */
      timeouts: Record<string, number>;
      /** Config `gate`: defaults for llm gates (runtime null: the gated agent's own). */
      gate: {
        model: string | null;
        timeout: number;
        system_prompt: string;
        runtime?: RuntimeName | null;
        mail_verdicts?: boolean;
      };
      script: Script | null;
      /** USD per million tokens by model (config `prices:` over troupe's defaults). */
      prices?: Record<string, { input: number; output: number; cached_input?: number }>;
      /** Config `routing:` when the task started (agents with model/effort auto). */
      routing?: RoutingConfig | null;
      /** `troupe run --label`: for routing rules. */
      labels?: string[];
      /** `troupe run --tier`: every routed stage of the task runs on this tier. */
      tier?: string | null;
      parentTaskId: string | null;
      kind: 'run' | 'fix';
      /** The tracker issue the task works on (`troupe watch`). */
      issue?: TaskIssueRef;
    }
  | {
      type: 'task_resumed';
      pid: number;
      /** Processes a previous owner of the task left running on this machine, ended before any stage ran again. */
      ended?: LeftoverProcess[];
    }
  /** `entry_point: auto`: the agent the router picked, or the first agent when its answer named none. */
  | { type: 'entry_routed'; agent: string; fallback: boolean; answer: string }
  /** Everything from stage `fromStage` on was set aside; the task runs again from there. */
  | { type: 'task_restarted'; fromStage: number }
  | {
      type: 'stage_started';
      stage: number;
      activation: string;
      agent: string;
      input: string;
      attempt: number;
      /** Set when the stage is a turn in a session (the activation is then the session's). */
      turn?: SessionTurn;
    }
  | { type: 'stage_output'; stage: number; text: string }
  | {
      type: 'stage_completed';
      stage: number;
      activation: string;
      agent: string;
      output: string;
      usage: Usage;
      durationMs: number;
      meta?: Record<string, string | number | boolean>;
    }
  | {
      type: 'stage_attempt_failed';
      stage: number;
      activation: string;
      agent: string;
      attempt: number;
      error: StageError;
      partialOutput: string;
      /** From the stage's start to its failure; absent in logs from before it was recorded. */
      durationMs?: number;
      /** ISO time before which the retry must not start (backoff); absent when no retry is due. */
      retryAt?: string;
      meta?: Record<string, string | number | boolean>;
    }
  | { type: 'stage_interrupted'; stage: number; activation: string }
  /**
   * Something the runtime reported that the user should see though the stage goes on: a tool
   * call the CLI refused, a settings file it skipped.
   */
  | { type: 'stage_warning'; stage: number; agent: string; message: string }
  /**
   * The stage's provider is closed (a rate or usage limit) until `resetAt`: the stage runs
   * again then, under the same number, and the attempt does not count as a failure.
   */
  | {
      type: 'rate_limited';
      stage: number;
      activation: string;
      agent: string;
      provider: string;
      resetAt: string;
      /** Sooner than the reset: another provider the stage may use is open (a fallback). */
      retryAt?: string;
      message: string;
      meta?: Record<string, string | number | boolean>;
    }
  | { type: 'gate_waiting'; stage: number; agent: string }
  /**
   * A mailbox agent's stage (runtime mailbox): its prompt is mailed to `handle` on the task's
   * thread, and the stage waits for the reply, until `deadline` (ISO; null: no timeout).
   */
  | {
      type: 'mailbox_asked';
      stage: number;
      activation: string;
      agent: string;
      handle: string;
      thread: string;
      deadline: string | null;
    }
  /** The reply to a `mailbox_asked`, taken off the bus: the stage completes with its body. */
  | { type: 'mailbox_replied'; stage: number; activation: string; from: string; body: string }
  /**
   * Mail the task wrote (a mailbox stage, a gate or question notice, a `SEND:` line) could not be
   * delivered: `to` never got it, for `reason`.
   */
  | { type: 'mail_failed'; to: string; kind: string; subject: string; reason: string }
  | {
      type: 'gate_decided';
      stage: number;
      agent: string;
      decision: 'approved' | 'rejected';
      reason: string;
      by: 'llm' | 'command' | 'human' | 'script';
      /** A person's verdict: the way it reached troupe, and who gave it there. */
      from?: Decider;
    }
  | {
      type: 'human_input_requested';
      activation: string;
      agent: string;
      stage: number | null;
      /** merge_conflict: a join's merge conflicted and no `on_conflict` agent is named. */
      mode: 'before' | 'on_demand' | 'merge_conflict';
      questions: string[];
    }
  | { type: 'human_input_given'; activation: string; answer: string; by: string }
  | { type: 'handoff'; stage: number; activation: string; targets: HandoffTarget[] }
  | { type: 'join'; agent: string; activations: string[] }
  | { type: 'session_started'; activation: string; session: string; participants: string[]; topic: string }
  | { type: 'session_round_ended'; activation: string; round: number; agreed: string[]; consensus: boolean }
  | {
      type: 'session_ended';
      activation: string;
      session: string;
      stage: number;
      outcome: 'consensus' | 'no_consensus';
      rounds: number;
      output: string;
    }
  | { type: 'chunk_added'; chunk: Chunk }
  | { type: 'chunk_updated'; id: string; status: ChunkStatus; by: string }
  | { type: 'chunk_removed'; id: string; by: string }
  /**
   * A task whose pipeline has no `workspace:` chose where to work when it started, once
   * (pipeline/isolation.ts): `worktree` (with the default settings) or in place.
   */
  | { type: 'isolation_chosen'; isolation: 'worktree' | 'none'; reason: string }
  /** The task works in its own git worktree from now on. */
  | { type: 'workspace_ready'; path: string; branch: string; base: string; repo: string }
  /** What a stage changed, committed on the task branch (or on a fan-out `branch`). */
  | { type: 'workspace_committed'; stage: number; sha: string; branch?: string }
  /**
   * After the merge into base: the task's worktrees and branches that held nothing base lacks
   * were removed (`removed`: branch names, or paths of checkouts without one).
   */
  | { type: 'workspace_removed'; removed: string[] }
  /**
   * A fan-out branch (a lineage of a top-level fan-out) works in its own worktree from now on,
   * on `branch`, started at `start` (the task branch's tip then).
   */
  | {
      type: 'branch_workspace_ready';
      lineage: string;
      agent: string;
      path: string;
      branch: string;
      start: string;
    }
  /**
   * Before `activation` (a join) runs, its branches were merged into its worktree (`into`: a
   * lineage's branch, or null for the task branch); `resolved` is a branch a conflict resolver
   * (or a person) integrated by hand. `head`: the worktree's commit afterwards.
   */
  | {
      type: 'branches_merged';
      /** null: before the task completes (branches no join collected). */
      activation: string | null;
      into: string | null;
      branches: string[];
      resolved?: string;
      head: string;
    }
  /**
   * Merging `branch` conflicted in `files`: the merge was aborted, nothing was overwritten.
   * `merged` went in before it; the conflict goes to `resolver` (an agent), or to a person.
   */
  | {
      type: 'branch_conflict';
      activation: string | null;
      into: string | null;
      branch: string;
      files: string[];
      merged: string[];
      resolved?: string;
      head: string;
      resolver: string | null;
      /** Each conflicting file on both sides (cut to a few KiB), for whoever resolves it. */
      sides?: ConflictSide[];
    }
  /** The resolver's stage for a join's conflict is done: the join merges what is left. */
  | { type: 'conflict_handled'; activation: string; resolver: string; stage: number }
  /**
   * `stray`: the task branch's tip was a commit the log never recorded (a superseded attempt's):
   * kept as a tag, the branch put back at the recorded commit, and that merged.
   */
  | { type: 'workspace_merged'; into: string; how: string; sha: string; stray?: StrayCommit }
  | { type: 'workspace_conflict'; into: string; files: string[]; stray?: StrayCommit }
  /** `merge: on_complete` could not merge (a dirty base checkout, a git failure): left for `troupe merge`. */
  | { type: 'workspace_merge_failed'; into: string; reason: string }
  /** A choice the scheduler made for a stage, and why (the decision log). */
  | {
      type: 'decision';
      stage: number;
      agent: string;
      kind: 'fallback';
      from: { runtime: string; model: string | null };
      to: { runtime: string; model: string | null };
      reason: string;
    }
  /** Routing: the tier a stage of an agent with model/effort auto runs on, and why. */
  | {
      type: 'decision';
      stage: number;
      agent: string;
      kind: 'route';
      /** pipeline/agent@size: what history is kept by. */
      taskKind: string;
      recommended: { tier: string; reason: string };
      tier: string;
      runtime: string;
      model: string | null;
      effort: Effort | null;
      overrides: string[];
      reason: string;
    }
  /** A verifier (not the worker) judged the worker's commit. */
  | {
      type: 'verified';
      stage: number;
      sha: string | null;
      verifier: string;
      decision: 'approved' | 'rejected';
    }
  /**
   * A planner's plan, checked: its pieces (each after the pieces it depends on) run as a graph
   * from now on (docs/task-graphs.md). `round`: 1 for the first plan, one more for each re-plan.
   */
  | {
      type: 'plan_expanded';
      stage: number;
      activation: string;
      agent: string;
      round: number;
      pieces: PlanPiece[];
      warnings: string[];
    }
  /** A piece's worker starts on `input`, in the piece's worktree (made at its first stage). */
  | { type: 'piece_started'; piece: string; input: string }
  /** A piece ended without work to merge: the pieces that depend on it do not start. */
  | { type: 'piece_failed'; piece: string; reason: string; stage: number | null }
  /** Before its merge: the piece's branch changed files outside the paths it owns. */
  | { type: 'piece_outside_paths'; piece: string; files: string[] }
  /** Failed pieces sent the rest of the plan back to its planner (`input`: what it is told). */
  | { type: 'plan_replanned'; round: number; failed: string[]; input: string }
  /** The task's size (S, M, L, XL), from `--size`, the API, or an agent's `SIZE:` line (`by` its id). */
  | { type: 'task_sized'; size: TaskSize; by: string }
  /** A valid spec from an agent with `spec: required`; later templates read it as `{{ spec }}`. */
  | { type: 'spec_recorded'; stage: number; agent: string; spec: Spec }
  /**
   * The stage's output failed its spec or `output_schema:` check: it goes back to the same agent
   * with `reason`, and counts as a gate rejection (toward `gate.max_retries`).
   */
  | {
      type: 'output_rejected';
      stage: number;
      agent: string;
      check: 'spec' | 'output_schema' | 'plan';
      reason: string;
    }
  /** The task has used 80 % of its budget. */
  | { type: 'budget_warning'; used: number; limit: number; unit: 'tokens' | 'usd' }
  | { type: 'task_completed' }
  | {
      type: 'task_failed';
      reason: string;
      stage: number | null;
      errorKind: TaskErrorKind | null;
      /** The error's hint (a TroupeError's) when no stage failed; a stage's is in its error. */
      hint?: string;
    }
  | { type: 'task_cancelled'; reason: string }
  /**
   * The task's wake-ups failed `failures` times, past the queue's retry limit (its last error is
   * `reason`): nothing takes it up again until a person resumes it (`task_resumed`). The event's
   * `at` is when it was parked.
   */
  | { type: 'task_parked'; reason: string; failures: number };

export type TaskEventType = TaskEvent['type'];
export type EventOf<T extends TaskEventType> = Extract<TaskEvent, { type: T }>;

/** Every event type, once: `satisfies` refuses a name the union lacks, and the keys must cover it. */
const EVENT_TYPE_SET = {
  task_created: true,
  task_resumed: true,
  entry_routed: true,
  task_restarted: true,
  stage_started: true,
  stage_output: true,
  stage_completed: true,
  stage_attempt_failed: true,
  stage_interrupted: true,
  stage_warning: true,
  rate_limited: true,
  gate_waiting: true,
  mailbox_asked: true,
  mailbox_replied: true,
  mail_failed: true,
  gate_decided: true,
  human_input_requested: true,
  human_input_given: true,
  handoff: true,
  join: true,
  session_started: true,
  session_round_ended: true,
  session_ended: true,
  chunk_added: true,
  chunk_updated: true,
  chunk_removed: true,
  isolation_chosen: true,
  workspace_ready: true,
  workspace_committed: true,
  workspace_removed: true,
  branch_workspace_ready: true,
  branches_merged: true,
  branch_conflict: true,
  conflict_handled: true,
  workspace_merged: true,
  workspace_conflict: true,
  workspace_merge_failed: true,
  decision: true,
  verified: true,
  plan_expanded: true,
  piece_started: true,
  piece_failed: true,
  piece_outside_paths: true,
  plan_replanned: true,
  task_sized: true,
  spec_recorded: true,
  output_rejected: true,
  budget_warning: true,
  task_completed: true,
  task_failed: true,
  task_cancelled: true,
  task_parked: true,
} as const satisfies Record<TaskEventType, true>;

/**
 * The names of all event types, at run time: the live streams' SSE `event:` names and what the
 * dashboard subscribes to. A name missing here, or one the union lacks, does not compile.
 */
export const TASK_EVENT_TYPES = Object.keys(EVENT_TYPE_SET) as readonly TaskEventType[];

/** An event as stored: a global sequence number (SSE id), its task and when it was written. */
/** An event as the store keeps it; `engine` is the troupe version that appended it (SQL stores, from 0.1.0 on). */
export type StoredEvent = TaskEvent & { seq: number; taskId: string; at: string; engine?: string };

/**
 * Every status a task can have, in the order a task usually goes through them: the one list the
 * API's filters, the OpenAPI document, the CLI and the dashboard all read.
 * `waiting`: every open stage waits for a provider's limit to reset, or for a reply on the bus.
 * `parked`: its wake-ups kept failing; it waits for a person's `troupe resume` (not an end).
 */
export const TASK_STATUSES = [
  'pending',
  'running',
  'waiting',
  'awaiting_gate',
  'awaiting_human_input',
  'parked',
  'completed',
  'failed',
  'cancelled',
] as const;

export type TaskStatus = (typeof TASK_STATUSES)[number];

export function isTaskStatus(value: string): value is TaskStatus {
  return (TASK_STATUSES as readonly string[]).includes(value);
}

/** The statuses in which a task waits for a person. */
export const AWAITING_PERSON_STATUSES: readonly TaskStatus[] = ['awaiting_gate', 'awaiting_human_input'];

export function awaitsPerson(status: TaskStatus): boolean {
  return AWAITING_PERSON_STATUSES.includes(status);
}

export const TERMINAL_STATUSES: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];

export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/** Nothing takes the task up by itself: it has ended, or it is parked until a person resumes it. */
export function isStopped(status: TaskStatus): boolean {
  return isTerminal(status) || status === 'parked';
}
