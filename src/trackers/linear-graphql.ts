import { printable } from '../core/printable.js';
import { TrackerError } from '../core/tracker.js';
import { operationName } from './linear-queries.js';

/**
 * One call to Linear's GraphQL API (docs/trackers.md, "Linear"): a POST with the personal API
 * key as the bare `Authorization` header, as Linear documents for personal keys, and a timeout.
 * Every failure becomes one `TrackerError` line with the key blanked should an answer echo it.
 */

export interface LinearConnection {
  endpoint: string;
  apiKey: string;
  timeoutMs: number;
  now?: () => Date;
}

interface GraphQLError {
  message?: unknown;
  extensions?: { code?: unknown; type?: unknown; userPresentableMessage?: unknown };
}

/** How long to wait after a rate limit that names no reset. */
const UNNAMED_RESET_WAIT_MS = 60_000;

export async function linearRequest(
  connection: LinearConnection,
  document: string,
  variables: Record<string, unknown>,
  what: string,
): Promise<Record<string, unknown>> {
  const now = connection.now?.() ?? new Date();
  let response: Response;
  let text: string;
  try {
    response = await fetch(connection.endpoint, {
      method: 'POST',
      headers: {
        authorization: connection.apiKey,
        'content-type': 'application/json',
        'user-agent': 'troupe',
      },
      body: JSON.stringify({ query: document, variables, operationName: operationName(document) }),
      // a server that never answers is an unreachable tracker, not a poll that hangs
      signal: AbortSignal.timeout(connection.timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    const said = error instanceof Error ? error.message : String(error);
    throw new TrackerError('unreachable', `linear: ${what} failed: ${clean(said, connection.apiKey)}`, {
      hint: 'troupe retries on its next poll',
    });
  }

  let body: { data?: unknown; errors?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // not JSON (a proxy's HTML page, an empty 502): judged by the status below
  }
  const errors = Array.isArray(body?.errors) ? (body.errors as GraphQLError[]) : [];
  const codes = errors.map((e) => String(e?.extensions?.code ?? '').toUpperCase());
  const said = clean(
    errors.map((e) => String(e?.extensions?.userPresentableMessage ?? e?.message ?? '')).join('; ') ||
      `${response.status} ${response.statusText}`,
    connection.apiKey,
  );

  if (response.status === 429 || codes.includes('RATELIMITED')) {
    const resetAt = rateLimitReset(response.headers, now);
    throw new TrackerError('rate_limited', `linear: rate limited on ${what} until ${resetAt}`, {
      resetAt,
      hint: 'troupe waits for the reset; an API key of its own per project spreads the load',
    });
  }
  if (response.status === 401 || codes.includes('AUTHENTICATION_ERROR')) {
    throw new TrackerError('auth', `linear: the key from LINEAR_API_KEY was refused on ${what} (${said})`, {
      hint: 'the key is revoked, expired or mistyped: create a personal API key in Linear (Settings, Security & access) and set LINEAR_API_KEY',
    });
  }
  if (response.status === 403 || codes.includes('FORBIDDEN')) {
    throw new TrackerError('auth', `linear: the key from LINEAR_API_KEY may not ${what} (${said})`, {
      hint: 'give the key write access to the team, or use a member account',
    });
  }
  if (response.status >= 500) {
    throw new TrackerError('unreachable', `linear: ${what} failed: ${said}`, {
      hint: 'troupe retries on its next poll',
    });
  }
  if (!response.ok && errors.length === 0) {
    throw new TrackerError('invalid', `linear: ${what} was refused (${said})`, {
      hint: 'check the endpoint: it should be a GraphQL API such as https://api.linear.app/graphql',
    });
  }
  if (errors.length > 0) {
    const everything = errors.map((e) => `${e?.message} ${e?.extensions?.userPresentableMessage}`).join(' ');
    const missing = codes.includes('ENTITY_NOT_FOUND') || /\b(not found|could not find)\b/i.test(everything);
    throw new TrackerError(missing ? 'not_found' : 'invalid', `linear: ${what} was refused: ${said}`);
  }
  if (typeof body?.data !== 'object' || body.data === null) {
    throw new TrackerError('invalid', `linear: ${what}: the API answered without data`);
  }
  return body.data as Record<string, unknown>;
}

/**
 * The reset Linear names on a rate limit: `X-RateLimit-Requests-Reset` (epoch milliseconds), else
 * the complexity budget's `X-RateLimit-Complexity-Reset`, else a minute from now.
 */
function rateLimitReset(headers: Headers, now: Date): string {
  for (const name of ['x-ratelimit-requests-reset', 'x-ratelimit-complexity-reset']) {
    const value = headers.get(name)?.trim();
    if (value && /^\d{1,15}$/.test(value)) return new Date(Number(value)).toISOString();
  }
  return new Date(now.getTime() + UNNAMED_RESET_WAIT_MS).toISOString();
}

function clean(message: string, key: string): string {
  const blanked = key ? message.split(key).join('[key]') : message;
  const line = printable(blanked);
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
