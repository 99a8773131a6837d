import { describe, expect, it } from 'vitest';
import { githubError } from './github-errors.js';

const now = new Date('2026-12-05T10:00:00Z');
const context = { token: 'ghp_secret', tokenSource: 'GH_TOKEN', now };
const http = (status: number, message: string, headers: Record<string, string> = {}) =>
  Object.assign(new Error(message), { status, response: { headers } });

describe('a failed GitHub call', () => {
  it('tells a refused token from a token without the permission, both auth', () => {
    const refused = githubError(
      http(403, 'Bad credentials - https://docs.github.com/rest'),
      'list the issues',
      context,
    );
    expect(refused.kind).toBe('auth');
    expect(refused.message).toBe(
      'github: the token from GH_TOKEN was refused on list the issues (403 Bad credentials)',
    );
    const denied = githubError(http(403, 'Resource not accessible by integration'), 'comment on #1', context);
    expect(denied.kind).toBe('auth');
    expect(denied.message).toContain('may not comment on #1');
    expect(denied.hint).toContain('Issues read and write');
  });

  it('reads when a rate limit resets: retry-after (seconds or a date), x-ratelimit-reset, or a minute', () => {
    const reset = (status: number, message: string, headers: Record<string, string>) =>
      githubError(http(status, message, headers), 'x', context);
    expect(reset(429, 'slow', { 'retry-after': '30' }).resetAt).toBe('2026-12-05T10:00:30.000Z');
    expect(reset(403, 'slow', { 'retry-after': 'Sat, 05 Dec 2026 10:05:00 GMT' }).resetAt).toBe(
      '2026-12-05T10:05:00.000Z',
    );
    const primary = reset(403, 'API rate limit exceeded', {
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '1796464800',
    });
    expect(primary.kind).toBe('rate_limited');
    expect(primary.resetAt).toBe(new Date(1796464800 * 1000).toISOString());
    expect(reset(403, 'You have exceeded a secondary rate limit', {}).resetAt).toBe(
      '2026-12-05T10:01:00.000Z',
    );
    expect(reset(403, 'forbidden', { 'x-ratelimit-remaining': '12' }).kind).toBe('auth');
  });

  it('is not_found, unreachable or invalid by status; one printable line without the token', () => {
    expect(githubError(http(410, 'Gone'), 'read #3', context).kind).toBe('not_found');
    expect(githubError(http(503, 'Service Unavailable'), 'x', context).kind).toBe('unreachable');
    expect(
      githubError(Object.assign(new Error('connect ECONNREFUSED'), { status: 500 }), 'x', context).kind,
    ).toBe('unreachable');
    expect(githubError(new TypeError('fetch failed'), 'x', context).kind).toBe('unreachable');
    const hostile = githubError(http(422, 'bad\n\u001b[31mghp_secret\u001b[0m'), 'x', context);
    expect(hostile.kind).toBe('invalid');
    expect(hostile.message).toBe('github: x was refused (422 bad [token])');
  });
});
