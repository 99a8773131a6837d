/**
 * Every error troupe reports on purpose is a TroupeError with a stable `code`.
 * The CLI maps codes to exit codes in one place (cli/exit-codes.ts); nothing else exits.
 */
export abstract class TroupeError extends Error {
  abstract readonly code: string;
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

/** A script file for the scripted runtime that cannot be used. */
export class ScriptError extends TroupeError {
  readonly code = 'script_invalid';
}

/** Another process holds the task (it is running there). */
export class TaskBusyError extends TroupeError {
  readonly code = 'task_busy';
}

export function isTroupeError(e: unknown): e is TroupeError {
  return e instanceof TroupeError;
}

/** What went wrong, in words, whatever was thrown (an Error's message, anything else as a string). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
