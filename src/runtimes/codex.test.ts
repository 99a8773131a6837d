import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexArgs, codexRuntime } from './codex.js';
import { baseRequest, collect, failureOf, fakeCli, runtimeContract } from './contract.js';

const NOW = new Date('2026-11-29T10:02:30Z');
const make = (scenario: string, env: Record<string, string> = {}) =>
  codexRuntime({
    bin: fakeCli('codex'),
    env: { FAKE_CLI_SCENARIO: scenario, ...env },
    now: () => NOW,
    reconnectWindowMs: 1000,
  });

runtimeContract('codex', make, {
  success: {
    scenario: 'success',
    text: 'hi from mock',
    sessionId: '01a226c2-94fa-7610-bbb6-470e6da8aaee',
    usage: { input_tokens: 234, output_tokens: 56, cache_read_tokens: 1000 },
  },
  failures: [
    { scenario: 'usage-limit', kind: 'usage_limit', resetAt: new Date('2026-11-29T13:13:00Z') },
    { scenario: 'usage-limit-free-plan', kind: 'usage_limit', resetAt: new Date('2026-11-29T11:07:00Z') },
    { scenario: 'usage-limit-pro-plan', kind: 'usage_limit', resetAt: new Date('2026-11-29T11:07:00Z') },
    { scenario: 'usage-limit-multiday', kind: 'usage_limit', resetAt: new Date('2026-12-02T10:03:00Z') },
    { scenario: 'usage-limit-no-plan', kind: 'usage_limit' },
    { scenario: 'insufficient-quota', kind: 'quota_billing' },
    { scenario: 'api-429', kind: 'rate_limited' },
    { scenario: 'auth-401', kind: 'auth' },
    { scenario: 'untrusted-dir', kind: 'untrusted_directory' },
    { scenario: 'no-network', kind: 'network' },
    { scenario: 'no-network-dns-failure', kind: 'network' },
  ],
  hang: { scenario: 'hang', pids: true },
  rawLog: true,
  argv: 'argv',
});

describe('codex runtime', () => {
  it('runs `codex exec --json` with model, effort, sandbox, directory and MCP through -c', () => {
    const { args, logged } = codexArgs(
      baseRequest({
        cwd: '/work/repo',
        model: 'gpt-5.5',
        effort: 'max',
        permissions: 'edit',
        mcp: [{ server: 'my.db', command: 'db-mcp', args: ['--ro'], env: { TOKEN: 'secret' } }],
        extraFlags: ['--ephemeral'],
      }),
      true,
    );
    expect(args).toEqual([
      'exec',
      '--json',
      '-m',
      'gpt-5.5',
      '-c',
      'model_reasoning_effort=xhigh',
      '-s',
      'workspace-write',
      '-C',
      '/work/repo',
      '-c',
      'mcp_servers."my.db".command="db-mcp"',
      '-c',
      'mcp_servers."my.db".args=["--ro"]',
      '-c',
      'mcp_servers."my.db".env={"TOKEN"="secret"}',
      '--ephemeral',
      '--',
      'say hi',
    ]);
    expect(logged.join(' ')).not.toContain('secret');
  });

  it('resumes with `exec resume <thread>`, whose sandbox goes through config', () => {
    const { args } = codexArgs(baseRequest({ resumeSessionId: 'thread-1' }), false);
    expect(args).toEqual([
      'exec',
      'resume',
      '--json',
      '-c',
      'sandbox_mode="read-only"',
      '--skip-git-repo-check',
      'thread-1',
      '--',
      'say hi',
    ]);
  });

  it('runs with TZ=UTC and stdin closed, and skips the git check only outside a repository', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'troupe-codex-'));
    const argvFile = path.join(dir, 'argv.jsonl');
    await collect(make('success', { FAKE_CLI_ARGV_FILE: argvFile }), baseRequest({ cwd: dir }));
    await collect(make('success', { FAKE_CLI_ARGV_FILE: argvFile }), baseRequest({ cwd: process.cwd() }));
    const [outside, inside] = readFileSync(argvFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(outside.env.TZ).toBe('UTC');
    expect(outside.stdin).toBe('');
    expect(outside.argv).toContain('--skip-git-repo-check');
    expect(inside.argv).not.toContain('--skip-git-repo-check');
  });

  it('streams reasoning, the command it ran and its output', async () => {
    const events = await collect(make('command-execution'), baseRequest());
    expect(events.filter((e) => e.type !== 'session' && e.type !== 'usage')).toEqual([
      { type: 'thinking', text: '**Planning** run echo' },
      {
        type: 'tool_start',
        id: 'item_1',
        name: 'shell',
        input: { command: "/bin/bash -lc 'echo hello-from-tool'" },
      },
      { type: 'tool_result', id: 'item_1', output: 'hello-from-tool\n' },
      { type: 'text', text: 'hi from mock' },
      {
        type: 'result',
        text: 'hi from mock',
        usage: { input_tokens: 468, output_tokens: 112, cache_read_tokens: 2000 },
        meta: { session_id: '01a226c6-1321-7800-9071-990e8177af3c' },
      },
    ]);
  });

  it('ends an endless reconnect as network, with the reason', async () => {
    const error = await failureOf(make('no-network-dns-failure'), baseRequest());
    expect(error.message).toMatch(/kept reconnecting .*(Name does not resolve|error sending request)/);
    expect(error.retryable).toBe(true);
  });
});
