import { describe, expect, it } from 'vitest';
import { retryAfter } from './retry-policy.js';

const retry = (max_retries: number, backoff: number) => ({
  retry: { max_retries, backoff, fallback_context_strategy: null },
});

describe('retryAfter: whether a failed stage runs again, and when', () => {
  it('by default retries a retryable kind twice, after 10 s then 20 s', () => {
    expect([1, 2, 3].map((attempt) => retryAfter({ retry: null }, 'overloaded', attempt))).toEqual([
      { retry: true, delayMs: 10_000 },
      { retry: true, delayMs: 20_000 },
      { retry: false },
    ]);
  });

  it('doubles the backoff of retry: from its first delay, at most 5 minutes', () => {
    expect([1, 2, 3, 4].map((attempt) => retryAfter(retry(4, 100), 'network', attempt))).toEqual([
      { retry: true, delayMs: 100_000 },
      { retry: true, delayMs: 200_000 },
      { retry: true, delayMs: 300_000 },
      { retry: true, delayMs: 300_000 },
    ]);
    expect(retryAfter(retry(1, 0), 'timeout', 1)).toEqual({ retry: true, delayMs: 0 });
  });

  it('never retries auth or any other kind that would fail the same way', () => {
    for (const kind of ['auth', 'quota_billing', 'context_overflow', 'missing_cli'] as const)
      expect(retryAfter(retry(5, 1), kind, 1)).toEqual({ retry: false });
  });

  it('retries a crash only when the agent asks for retries, as aqm retries any failure', () => {
    expect(retryAfter({ retry: null }, 'crashed', 1)).toEqual({ retry: false });
    expect(retryAfter(retry(1, 2), 'crashed', 1)).toEqual({ retry: true, delayMs: 2000 });
    expect(retryAfter(retry(1, 2), 'crashed', 2)).toEqual({ retry: false });
  });
});
