import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ClosedProviders, providerKey, runtimeOfKey } from './provider-key.js';

const openai = (base_url: string | null, api_key_env: string | null = null) => ({
  runtime: 'openai' as const,
  openai: { base_url, api_key_env },
});
const fp = (variable: string, value: string) =>
  createHash('sha256').update(`${variable}=${value}`).digest('hex').slice(0, 8);

describe('providerKey: what a rate limit closes', () => {
  it('is the runtime name for a CLI on its own login', () => {
    expect(providerKey({ runtime: 'claude' }, {})).toBe('claude');
    expect(providerKey({ runtime: 'gemini' }, { PATH: '/bin' })).toBe('gemini');
    expect(providerKey({ runtime: 'command' }, { ANTHROPIC_API_KEY: 'x' })).toBe('command');
  });

  it('tells endpoints of runtime openai apart, and keys by a fingerprint, never the key', () => {
    const env = { OPENAI_API_KEY: 'sk-secret-one', MY_KEY: 'k2' };
    const ollama = providerKey(openai('http://127.0.0.1:11434/v1'), env);
    const hosted = providerKey(openai(null), env);
    expect(ollama).toBe('openai@127.0.0.1:11434');
    expect(hosted).toBe(`openai@api.openai.com#${fp('OPENAI_API_KEY', 'sk-secret-one')}`);
    expect(hosted).not.toContain('sk-secret');
    expect(providerKey(openai('https://openrouter.ai/api/v1/', 'MY_KEY'), env)).toBe(
      `openai@openrouter.ai/api#${fp('MY_KEY', 'k2')}`,
    );
    // the user's own OPENAI_BASE_URL, when the agent names none
    expect(providerKey(openai(null), { OPENAI_BASE_URL: 'http://gpu-box:8000/v1' })).toBe(
      'openai@gpu-box:8000',
    );
  });

  it('tells two keys or accounts of one CLI apart, in the CLI’s own order of precedence', () => {
    const a = providerKey({ runtime: 'claude' }, { ANTHROPIC_API_KEY: 'sk-ant-a' });
    const b = providerKey({ runtime: 'claude' }, { ANTHROPIC_API_KEY: 'sk-ant-b' });
    expect(a).toMatch(/^claude#[0-9a-f]{8}$/);
    expect(a).not.toBe(b);
    // ANTHROPIC_AUTH_TOKEN wins over ANTHROPIC_API_KEY, as in Claude Code
    expect(providerKey({ runtime: 'claude' }, { ANTHROPIC_API_KEY: 'x', ANTHROPIC_AUTH_TOKEN: 't' })).toBe(
      `claude#${fp('ANTHROPIC_AUTH_TOKEN', 't')}`,
    );
    expect(providerKey({ runtime: 'claude' }, { CLAUDE_CONFIG_DIR: '/home/me/.claude-work' })).toBe(
      `claude#${fp('CLAUDE_CONFIG_DIR', '/home/me/.claude-work')}`,
    );
    expect(providerKey({ runtime: 'claude' }, { ANTHROPIC_BASE_URL: 'https://gw.example.com/' })).toBe(
      'claude@gw.example.com',
    );
    expect(providerKey({ runtime: 'claude' }, { CLAUDE_CODE_USE_BEDROCK: '1' })).toBe('claude@bedrock');
    expect(providerKey({ runtime: 'codex' }, { CODEX_HOME: '/srv/codex-2' })).toBe(
      `codex#${fp('CODEX_HOME', '/srv/codex-2')}`,
    );
    expect(providerKey({ runtime: 'gemini' }, { GEMINI_API_KEY: 'g' })).toBe(
      `gemini#${fp('GEMINI_API_KEY', 'g')}`,
    );
  });

  it('names its runtime first', () => {
    expect(runtimeOfKey('openai@127.0.0.1:11434#abcd0123')).toBe('openai');
    expect(runtimeOfKey('claude*')).toBe('claude');
  });
});

describe('ClosedProviders', () => {
  it("finds a key's own window, or its runtime's whole one from an older store (the later)", () => {
    const closed = new ClosedProviders([
      { provider: 'openai@127.0.0.1:11434', resetAt: '2026-12-01T10:05:00Z' },
      { provider: 'openai*', resetAt: '2026-12-01T10:01:00Z' },
    ]);
    expect(closed.until('openai@127.0.0.1:11434')).toBe('2026-12-01T10:05:00Z');
    expect(closed.until('openai@api.openai.com#0badf00d')).toBe('2026-12-01T10:01:00Z');
    expect(closed.isClosed('claude')).toBe(false);
  });
});
