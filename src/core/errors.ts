/**
 * Every error troupe reports on purpose is a TroupeError with a stable `code`.
 * The CLI maps codes to exit codes in one place (cli/exit-codes.ts), the API to HTTP statuses in
 * another (server/errors.ts); both tables are over TroupeErrorCode, so a new code that either
 * forgets is a compile error. Nothing else exits.
 */
export type TroupeErrorCode =
  // wrong input, or something that does not exist or cannot be done now (this file)
  | 'usage'
  | 'not_found'
  | 'invalid_state'
  | 'task_busy'
  | 'pipeline_invalid'
  | 'script_invalid'
  | 'too_large'
  // the event store (store/): its URL, its server, and a lease another process took over
  | 'store_invalid'
  | 'store_unavailable'
  | 'store_too_new'
  | 'lease_lost'
  // the pipeline language and the project config (pipeline/)
  | 'template_error'
  | 'condition_invalid'
  | 'routing_config_invalid'
  | 'routing_unavailable'
  // an agent asked to write a pipeline did not write a valid one (app/pipeline-author.ts)
  | 'authoring_failed'
  // an agent's CLI or API failed (core/runtime.ts: its `kind` says how)
  | 'runtime_error'
  // the message bus (bus/errors.ts)
  | 'bus_timeout'
  | 'context_mismatch'
  | 'bus_collision'
  | 'bus_partial_delivery'
  | 'bus_message_invalid'
  | 'bus_config_invalid'
  | 'bus_dlq_retry_refused'
  // live co-op: setup and launch wait for the operator (bus/errors.ts; AMQ's exit 6)
  | 'action_required'
  // git, worktrees and the scripted runtime's effects (workspace/, engine/execute/branch-workspaces.ts)
  | 'git_failed'
  | 'merge_conflict'
  | 'branch_in_use'
  | 'repo_without_commits'
  | 'scripted_effect_invalid'
  // the pipeline registry (registry/errors.ts)
  | 'registry_error'
  | 'integrity_error'
  // the work queue on PostgreSQL (store/queue/)
  | 'queue_unavailable'
  // an issue tracker (core/tracker.ts: its `kind` says how)
  | 'tracker_error'
  // only the HTTP API answers these (server/errors.ts ApiError)
  | 'bad_request'
  | 'agent_exists';

export abstract class TroupeError extends Error {
  abstract readonly code: TroupeErrorCode;
  readonly hint?: string;

  constructor(message: string, options?: { hint?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    if (options?.hint) this.hint = options.hint;
  }
}

/** Wrong flags, arguments or files given on the command line. */
export class UsageError extends TroupeError {
  readonly code = 'usage';
}

/** A task, pipeline, agent or file that does not exist. */
export class NotFoundError extends TroupeError {
  readonly code = 'not_found';
}

/** The request conflicts with the task's current state (approve a running task, resume a finished one). */
export class StateError extends TroupeError {
  readonly code = 'invalid_state';
}

/** A pipeline or config file that cannot be used; carries where. */
export class PipelineError extends TroupeError {
  readonly code = 'pipeline_invalid';
  constructor(
    readonly file: string,
    readonly line: number,
    readonly col: number,
    readonly detail: string,
    hint?: string,
  ) {
    super(`${file}:${line}:${col}: ${detail}`, hint ? { hint } : undefined);
  }
}

/** An agent asked to write a pipeline still had errors after the last round; nothing was written. */
export class AuthoringError extends TroupeError {
  readonly code = 'authoring_failed';
}

/** A script file for the scripted runtime that cannot be used. */
export class ScriptError extends TroupeError {
  readonly code = 'script_invalid';
}

/** A request body or a task's input over its size limit (docs/server.md, Limits). */
export class TooLargeError extends TroupeError {
  readonly code = 'too_large';
}

/** Another process holds the task (it is running there). */
export class TaskBusyError extends TroupeError {
  readonly code = 'task_busy';
}

/** A store URL or path that cannot be used (an unknown scheme, a malformed URL). */
export class StoreConfigError extends TroupeError {
  readonly code = 'store_invalid';
}

/** The store's server cannot be reached or refuses this client (down, cut off, wrong password). */
export class StoreUnavailableError extends TroupeError {
  readonly code = 'store_unavailable';
}

/**
 * The store's schema has migrations this troupe does not know (a newer troupe migrated it): this
 * one writes nothing to it, as it may not keep what the newer schema requires.
 */
export class StoreTooNewError extends TroupeError {
  readonly code = 'store_too_new';
}

/**
 * The task's lease was taken over by another process (this one was cut off or stalled past the
 * lease's expiry): the store refused to record anything more for the task from here.
 */
export class LeaseLostError extends TroupeError {
  readonly code = 'lease_lost';
  constructor(
    readonly taskId: string,
    message: string,
  ) {
    super(message);
  }
}

/** The work queue's database cannot be reached (or none is configured where one is needed). */
export class QueueError extends TroupeError {
  readonly code = 'queue_unavailable';
}

export function isTroupeError(e: unknown): e is TroupeError {
  return e instanceof TroupeError;
}

/** What went wrong, in words, whatever was thrown (an Error's message, anything else as a string). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
