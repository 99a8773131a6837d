import { describe, expect, it } from 'vitest';
import { agent } from '../test-pipelines.js';
import { chooseRunner, rateLimitedEvent } from './fallback.js';
import type { StepOf } from './plan.js';

describe('fallback: who runs a stage while providers are closed', () => {
  const node = agent('a', {
    runtime: 'claude',
    model: 'opus',
    fallback: [
      { runtime: 'gemini', model: 'gemini-2.5-pro' },
      { runtime: 'codex', model: null },
    ],
  });
  const closed = (...providers: Array<[string, string]>) => new Map(providers);

  it("runs on the agent's own runtime while it is open", () => {
    const choice = chooseRunner(node, node, 3, closed(['gemini', '2026-12-01T10:00:00Z']));
    expect(choice).toMatchObject({ kind: 'run', runner: node, provider: 'claude', decision: null });
  });

  it('moves to the first open fallback, and says so in a decision', () => {
    const choice = chooseRunner(
      node,
      node,
      3,
      closed(['claude', '2026-12-01T10:00:00Z'], ['gemini', '2026-12-01T09:00:00Z']),
    );
    expect(choice).toMatchObject({
      kind: 'run',
      provider: 'codex',
      runner: { id: 'a', runtime: 'codex', model: null },
      decision: {
        type: 'decision',
        stage: 3,
        kind: 'fallback',
        from: { runtime: 'claude', model: 'opus' },
        to: { runtime: 'codex', model: null },
        reason: 'claude is closed until 2026-12-01T10:00:00Z',
      },
    });
  });

  it('a routed stage falls back from its tier, not from the agent as written', () => {
    const onTier = { ...node, runtime: 'gemini' as const, model: 'gemini-2.5-flash' };
    const choice = chooseRunner(node, onTier, 1, closed());
    expect(choice).toMatchObject({ kind: 'run', runner: onTier, provider: 'gemini' });
  });

  it('waits for the first to reopen when every provider it may use is closed', () => {
    const choice = chooseRunner(
      node,
      node,
      3,
      closed(
        ['claude', '2026-12-01T10:00:00Z'],
        ['gemini', '2026-12-01T09:00:00Z'],
        ['codex', '2026-12-01T11:00:00Z'],
      ),
    );
    expect(choice).toMatchObject({
      kind: 'closed',
      provider: 'claude',
      reopens: '2026-12-01T09:00:00Z',
      message: 'claude, gemini, codex are closed until 2026-12-01T09:00:00Z',
    });
  });

  describe('the rate_limited event', () => {
    const step: StepOf<'start_stage'> = {
      kind: 'start_stage',
      activation: 'a1',
      agent: 'a',
      stage: 2,
      attempt: 1,
      input: 'x',
      notBefore: null,
    };
    const now = new Date('2026-12-01T08:00:00Z');
    const limit = {
      provider: 'claude',
      resetAt: '2026-12-01T10:00:00Z',
      message: 'limit',
      meta: { session_id: 's' },
    };

    it('retries at once when another runtime of the stage is open', () => {
      const choices = [
        { runtime: 'claude' as const, model: null },
        { runtime: 'gemini' as const, model: null },
      ];
      const event = rateLimitedEvent(
        step,
        limit,
        { choices, closed: closed(['claude', limit.resetAt]) },
        now,
      );
      expect(event).toEqual({
        type: 'rate_limited',
        stage: 2,
        activation: 'a1',
        agent: 'a',
        provider: 'claude',
        resetAt: limit.resetAt,
        retryAt: now.toISOString(),
        message: 'limit',
        meta: { session_id: 's' },
      });
    });

    it('waits for the reset when the limited provider was its only one', () => {
      const choices = [{ runtime: 'claude' as const, model: null }];
      const event = rateLimitedEvent(step, limit, { choices, closed: closed() }, now);
      expect(event).not.toHaveProperty('retryAt');
    });
  });
});
