import { Hono } from 'hono';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { errorResponse } from './errors.js';

describe('errorResponse', () => {
  afterEach(() => vi.restoreAllMocks());

  it('answers an unexpected error with a generic 500: what Node said goes to the log only', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const app = new Hono();
    app.onError((error, c) => errorResponse(c, error));
    app.get('/boom', () => {
      throw new TypeError(
        "The argument 'path' must be a string without null bytes. Received '/opt/troupe/dist/x'",
      );
    });
    const response = await app.request('/boom');
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      error: { code: 'internal', message: 'internal error', hint: 'the server log says what went wrong' },
    });
    expect(text).not.toContain('/opt/troupe');
    expect(log.mock.calls.flat().join(' ')).toContain('/opt/troupe/dist/x');
  });
});
