import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { isTroupeError, messageOf, TroupeError, type TroupeErrorCode } from '../core/errors.js';

/** An error the API answers with a status and a stable code: `{error: {code, message}}`. */
export class ApiError extends TroupeError {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: TroupeErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/**
 * troupe's error codes as HTTP statuses: the one mapping, as exit-codes.ts is for the CLI.
 * 400 a malformed request, 404 nothing by that name, 409 not now (the state of a task, branch
 * or mailbox), 413 a body or input over its limit, 422 a pipeline, config, script or message
 * that cannot be used, 500 a failure on this machine (git, the bus's or the store's config, disk), 502 the
 * agent's CLI or provider or a pipeline registry, 503 the store's server or the work queue's database out
 * of reach, 504 a wait that ran out.
 */
export const STATUS_BY_CODE = {
  usage: 400,
  bad_request: 400,
  not_found: 404,
  invalid_state: 409,
  task_busy: 409,
  agent_exists: 409,
  context_mismatch: 409,
  bus_collision: 409,
  bus_dlq_retry_refused: 409,
  action_required: 409,
  merge_conflict: 409,
  branch_in_use: 409,
  repo_without_commits: 409,
  integrity_error: 409,
  lease_lost: 409,
  pipeline_invalid: 422,
  script_invalid: 422,
  template_error: 422,
  condition_invalid: 422,
  routing_config_invalid: 422,
  routing_unavailable: 422,
  scripted_effect_invalid: 422,
  bus_message_invalid: 422,
  too_large: 413,
  git_failed: 500,
  bus_config_invalid: 500,
  bus_partial_delivery: 500,
  store_invalid: 500,
  store_too_new: 500,
  runtime_error: 502,
  registry_error: 502,
  tracker_error: 502,
  authoring_failed: 502,
  queue_unavailable: 503,
  store_unavailable: 503,
  bus_timeout: 504,
} as const satisfies Record<TroupeErrorCode, ContentfulStatusCode>;

export function errorResponse(c: Context, error: unknown): Response {
  if (error instanceof ApiError) {
    return c.json({ error: { code: error.code, message: error.message, ...error.details } }, error.status);
  }
  if (isTroupeError(error)) {
    return c.json(
      { error: { code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}) } },
      STATUS_BY_CODE[error.code],
    );
  }
  // An error troupe did not expect: its message can hold Node's internals, paths on this
  // machine, file contents; it goes to the server's log, the client learns only that it failed.
  console.error(`troupe serve: internal error on ${c.req.method} ${c.req.path}: ${messageOf(error)}`);
  if (process.env.TROUPE_DEBUG) console.error(error);
  return c.json(
    { error: { code: 'internal', message: 'internal error', hint: 'the server log says what went wrong' } },
    500,
  );
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'bad_request', message);
}
