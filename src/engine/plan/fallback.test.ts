import { describe, expect, it } from 'vitest';
import { ClosedProviders } from '../../core/provider-key.js';
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
  const closed = (...providers: Array<[string, string]>) =>
    new ClosedProviders(providers.map(([provider, resetAt]) => ({ provider, resetAt })));

  it("runs on the agent's own runtime while it is open", () => {
    const choice = chooseRunner(node, node, 3, closed(['gemini', '2026-12-01T10:00:00Z']), {});
    expect(choice).toMatchObject({ kind: 'run', runner: node, provider: 'claude', decision: null });
  });

  it('moves to the first open fallback, and says so in a decision', () => {
    const choice = chooseRunner(
      node,
      node,
      3,
      closed(['claude', '2026-12-01T10:00:00Z'], ['gemini', '2026-12-01T09:00:00Z']),
      {},
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
    const choice = chooseRunner(node, onTier, 1, closed(), {});
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
      {},
    );
    expect(choice).toMatchObject({
      kind: 'closed',
      provider: 'claude',
      reopens: '2026-12-01T09:00:00Z',
      message: 'claude, gemini, codex are closed until 2026-12-01T09:00:00Z',
    });
  });

  describe('providers are what was limited: runtime, endpoint and account', () => {
    const ollama = agent('local', {
      runtime: 'openai',
      model: 'llama3.2',
      openai: { base_url: 'http://127.0.0.1:11434/v1', api_key_env: null },
    });
    const hosted = agent('hosted', { runtime: 'openai', model: 'gpt-4.1-mini' });
    const env = { OPENAI_API_KEY: 'sk-one' };

    it('a limit on OpenAI does not close Ollama, both runtime openai', () => {
      const limited = chooseRunner(hosted, hosted, 1, closed(), env);
      expect(limited).toMatchObject({
        kind: 'run',
        provider: expect.stringMatching(/^openai@api\.openai\.com#[0-9a-f]{8}$/),
      });
      const windows = closed([(limited as { provider: string }).provider, '2026-12-01T10:00:00Z']);
      expect(chooseRunner(ollama, ollama, 2, windows, env)).toMatchObject({
        kind: 'run',
        provider: 'openai@127.0.0.1:11434',
      });
      expect(chooseRunner(hosted, hosted, 3, windows, env)).toMatchObject({ kind: 'closed' });
      // another key is another account
      expect(chooseRunner(hosted, hosted, 4, windows, { OPENAI_API_KEY: 'sk-two' })).toMatchObject({
        kind: 'run',
      });
    });

    it('a window from before provider keys (runtime*) closes every provider of its runtime', () => {
      const windows = closed(['openai*', '2026-12-01T10:00:00Z']);
      expect(chooseRunner(ollama, ollama, 1, windows, env)).toMatchObject({
        kind: 'closed',
        reopens: '2026-12-01T10:00:00Z',
      });
      expect(chooseRunner(node, node, 1, windows, env)).toMatchObject({ kind: 'run', provider: 'claude' });
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
        { runtime: 'claude' as const, model: null, provider: 'claude' },
        { runtime: 'gemini' as const, model: null, provider: 'gemini' },
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
      const choices = [{ runtime: 'claude' as const, model: null, provider: 'claude' }];
      const event = rateLimitedEvent(step, limit, { choices, closed: closed() }, now);
      expect(event).not.toHaveProperty('retryAt');
    });
  });
});
