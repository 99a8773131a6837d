import { printable } from '../core/printable.js';
import { TrackerError } from '../core/tracker.js';

/**
 * A failed GitHub REST call (an Octokit `RequestError`, or whatever fetch threw) as one
 * `TrackerError` line: the status and GitHub's own message, made printable, cut short, and with
 * the token blanked should an answer ever echo it. Never the error itself as a cause: its
 * request carries headers, and its stack is of no use to a person.
 */

interface HttpFailure {
  status?: unknown;
  message?: unknown;
  response?: { headers?: Record<string, string | number | undefined> };
}

/** How long GitHub asks to wait after a secondary rate limit that names no time. */
const SECONDARY_LIMIT_WAIT_MS = 60_000;

export function githubError(
  error: unknown,
  what: string,
  context: { token: string; tokenSource: string; now?: Date },
): TrackerError {
  if (error instanceof TrackerError) return error;
  const failure = (typeof error === 'object' && error !== null ? error : {}) as HttpFailure;
  const status = typeof failure.status === 'number' ? failure.status : 0;
  const headers = failure.response?.headers ?? {};
  const said = clean(String(failure.message ?? error), context.token);
  const now = context.now ?? new Date();
  const hasResponse = failure.response !== undefined;

  const resetAt = status === 403 || status === 429 ? rateLimitReset(headers, said, now) : null;
  if (resetAt) {
    return new TrackerError('rate_limited', `github: rate limited on ${what} until ${resetAt} (${status})`, {
      resetAt,
      hint: 'troupe waits for the reset; a token of its own per project spreads the load',
    });
  }
  if (status === 401 || status === 403) {
    const refused = status === 401 || /bad credentials/i.test(said);
    return new TrackerError(
      'auth',
      refused
        ? `github: the token from ${context.tokenSource} was refused on ${what} (${status} ${said})`
        : `github: the token from ${context.tokenSource} may not ${what} (${status} ${said})`,
      {
        hint: refused
          ? 'the token is revoked, expired or mistyped: set GH_TOKEN to a valid one, or run `gh auth login`'
          : 'give the token the Issues read and write permission on this repository',
      },
    );
  }
  if (status === 404 || status === 410) {
    return new TrackerError('not_found', `github: ${what}: not found (${status} ${said})`, {
      hint: 'check the owner, repository and API URL; GitHub also answers 404 to a token that cannot see a private repository',
    });
  }
  if (!hasResponse || status >= 500 || status === 0) {
    return new TrackerError('unreachable', `github: ${what} failed: ${status ? `${status} ` : ''}${said}`, {
      hint: 'troupe retries on its next poll',
    });
  }
  return new TrackerError('invalid', `github: ${what} was refused (${status} ${said})`);
}

/**
 * When a 403/429 is a rate limit, its reset as ISO: `retry-after` (seconds or an HTTP date)
 * first, as GitHub says to, then `x-ratelimit-reset` (epoch seconds) when nothing remains, then
 * a minute for a secondary limit that names no time. Null when it is no rate limit.
 */
function rateLimitReset(headers: Record<string, string | number | undefined>, said: string, now: Date) {
  const header = (name: string) => {
    const value = headers[name];
    return value === undefined ? undefined : String(value).trim();
  };
  const retryAfter = header('retry-after');
  if (retryAfter !== undefined) {
    if (/^\d+$/.test(retryAfter)) return new Date(now.getTime() + Number(retryAfter) * 1000).toISOString();
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return new Date(date).toISOString();
  }
  if (header('x-ratelimit-remaining') === '0') {
    const reset = header('x-ratelimit-reset');
    if (reset && /^\d+$/.test(reset)) return new Date(Number(reset) * 1000).toISOString();
    return new Date(now.getTime() + SECONDARY_LIMIT_WAIT_MS).toISOString();
  }
  if (/rate limit/i.test(said)) return new Date(now.getTime() + SECONDARY_LIMIT_WAIT_MS).toISOString();
  return null;
}

function clean(message: string, token: string): string {
  const blanked = token ? message.split(token).join('[token]') : message;
  const line = printable(blanked.replace(/ - https?:\/\/docs\.github\.com\S*$/, ''));
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
