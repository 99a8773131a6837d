import { type AgentNode, DEFAULT_RETRY } from '../../core/pipeline.js';
import { isRetryable, type RuntimeErrorKind } from '../../core/runtime.js';

/**
 * Whether a stage whose call failed runs again, and when: pure, so the planner (which decides)
 * and the executor (which records `retryAt` with the failure, so a crash loses no backoff) agree.
 *
 * - a retryable kind (network, overloaded, timeout) runs again up to `max_retries` times (default
 *   2), the first after `backoff` seconds (default 10), each next one after twice as long, at
 *   most 5 minutes;
 * - `session_not_found` runs again at once without the lost session, as the docs promise, at
 *   least once even with `max_retries: 0`;
 * - `crashed` (the CLI died, or an unclassified failure) runs again only when the agent asks for
 *   retries with `retry:`, as aqm retries any failure of a call; never by default;
 * - any other kind (auth, quota_billing, context_overflow, missing_cli, …) fails the task at
 *   once: the same call would fail the same way.
 *
 * Limits (`rate_limited`, `usage_limit`) are not failed attempts: they wait for their window.
 */

export type RetryDecision = { retry: false } | { retry: true; delayMs: number };

const MAX_DELAY_MS = 5 * 60_000;

/** After attempt number `attempt` failed with `kind`. */
export function retryAfter(
  node: Pick<AgentNode, 'retry'>,
  kind: RuntimeErrorKind,
  attempt: number,
): RetryDecision {
  const { max_retries, backoff } = node.retry ?? DEFAULT_RETRY;
  if (kind === 'session_not_found')
    return attempt < 1 + Math.max(1, max_retries) ? { retry: true, delayMs: 0 } : { retry: false };
  const retried = isRetryable(kind) || (kind === 'crashed' && node.retry !== null);
  if (!retried || attempt >= 1 + max_retries) return { retry: false };
  return { retry: true, delayMs: Math.min(backoff * 1000 * 2 ** (attempt - 1), MAX_DELAY_MS) };
}
