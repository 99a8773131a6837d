import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { TooLargeError } from '../core/errors.js';
import { MAX_TASK_INPUT_BYTES, sizeText } from '../core/input-limit.js';

/**
 * The most a request body may hold: 1 MiB. Room for a task input at its limit (256 KiB, which
 * JSON escaping can grow) and for any pipeline a person edits; a bigger body is refused with
 * 413 before it is read into memory.
 */
export const MAX_BODY_BYTES = 1024 * 1024;

export function limitBodies(maxBytes = MAX_BODY_BYTES): MiddlewareHandler {
  return bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new TooLargeError(`the request body is over the ${sizeText(maxBytes)} limit`, {
        hint: `a task input may hold ${sizeText(MAX_TASK_INPUT_BYTES)}; put larger material in a file in the project`,
      });
    },
  });
}
