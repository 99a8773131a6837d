import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { isTroupeError } from '../core/errors.js';

/** An error the API answers with a status and a stable code: `{error: {code, message}}`. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** troupe's error codes as HTTP statuses: the one mapping, as exit-codes.ts is for the CLI. */
const STATUS_BY_CODE: Record<string, ContentfulStatusCode> = {
  usage: 400,
  not_found: 404,
  invalid_state: 409,
  task_busy: 409,
  pipeline_invalid: 422,
  script_invalid: 422,
  config_invalid: 422,
  template_error: 422,
};

export function errorResponse(c: Context, error: unknown): Response {
  if (error instanceof ApiError) {
    return c.json({ error: { code: error.code, message: error.message, ...error.details } }, error.status);
  }
  if (isTroupeError(error)) {
    const status = STATUS_BY_CODE[error.code] ?? 500;
    return c.json(
      { error: { code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}) } },
      status,
    );
  }
  if (process.env.TROUPE_DEBUG) console.error(error);
  // an unexpected error: its message only, never a stack or the environment
  const message = error instanceof Error ? error.message : String(error);
  return c.json({ error: { code: 'internal', message } }, 500);
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'bad_request', message);
}
