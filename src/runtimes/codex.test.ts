import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RuntimeError } from '../core/runtime.js';
import { CodexStreamParser, codexArgs, codexRuntime, strictSchema, tomlMcpServerNames } from './codex.js';
import { baseRequest, capturedLines, collect, failureOf, fakeCli, runtimeContract } from './contract.js';

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
      '-c',
      'mcp_servers."my.db".default_tools_approval_mode="approve"',
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

  it("approves the agent's MCP tools (exec never asks), and disables the user's own servers", () => {
    const { args } = codexArgs(
      baseRequest({ mcp: [{ server: 'probe', command: 'probe-mcp', args: [], env: null }] }),
      true,
      { userMcpServers: ['probe', 'github', 'my.db'] },
    );
    expect(args).toContain('mcp_servers.probe.default_tools_approval_mode="approve"');
    expect(args).toContain('mcp_servers.github.enabled=false');
    expect(args).toContain('mcp_servers."my.db".enabled=false');
    // the agent's own server of that name is the agent's
    expect(args).not.toContain('mcp_servers.probe.enabled=false');
  });

  it("finds the MCP servers of the user's config.toml", () => {
    const toml = [
      'model = "gpt-5.5"',
      '[mcp_servers.github]',
      'command = "npx"',
      '[mcp_servers.github.env]',
      'TOKEN = "x"',
      '[ mcp_servers."my.db" ]',
      "[mcp_servers.'lit']",
      'mcp_servers.dotted.command = "x"',
      '[profiles.fast]',
      'mcp_servers_note = 1',
    ].join('\n');
    expect(tomlMcpServerNames(toml).sort()).toEqual(['dotted', 'github', 'lit', 'my.db']);
  });

  it('reads the user config from CODEX_HOME and disables its servers in the run', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'troupe-codex-'));
    writeFileSync(path.join(dir, 'config.toml'), '[mcp_servers.mine]\ncommand = "x"\n');
    const argvFile = path.join(dir, 'argv.jsonl');
    await collect(make('success', { FAKE_CLI_ARGV_FILE: argvFile, CODEX_HOME: dir }), baseRequest());
    expect(JSON.parse(readFileSync(argvFile, 'utf8')).argv).toContain('mcp_servers.mine.enabled=false');
    // without the user's config.toml, `mine` is no server: disabling it would make it one, and fail
    await collect(
      make('success', { FAKE_CLI_ARGV_FILE: argvFile, CODEX_HOME: dir }),
      baseRequest({ extraFlags: ['--ignore-user-config'] }),
    );
    const second = JSON.parse(readFileSync(argvFile, 'utf8').trim().split('\n')[1]!);
    expect(second.argv.join(' ')).not.toContain('mcp_servers.mine');
  });

  it('connects a remote MCP server by url, its headers masked in the log', () => {
    const { args, logged } = codexArgs(
      baseRequest({
        mcp: [
          {
            server: 'docs',
            command: null,
            args: [],
            env: null,
            url: 'https://mcp.example.com/mcp',
            headers: { Authorization: 'Bearer secret' },
          },
        ],
      }),
      true,
    );
    expect(args).toContain('mcp_servers.docs.url="https://mcp.example.com/mcp"');
    expect(args).toContain('mcp_servers.docs.http_headers={"Authorization"="Bearer secret"}');
    expect(args.join(' ')).not.toContain('mcp_servers.docs.command');
    expect(logged.join(' ')).not.toContain('secret');
  });

  it('runs a gate as --ephemeral, a stage not', () => {
    expect(codexArgs(baseRequest({ purpose: 'gate' }), true).args).toContain('--ephemeral');
    expect(codexArgs(baseRequest(), true).args).not.toContain('--ephemeral');
  });

  it('passes a strict output_schema as an --output-schema file for the run only', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'troupe-codex-'));
    const argvFile = path.join(dir, 'argv.jsonl');
    const strict = {
      type: 'object',
      properties: { answer: { type: 'string' } },
      required: ['answer'],
      additionalProperties: false,
    };
    const loose = { type: 'object', properties: { answer: { type: 'string' } } };
    await collect(make('success', { FAKE_CLI_ARGV_FILE: argvFile }), baseRequest({ outputSchema: strict }));
    await collect(make('success', { FAKE_CLI_ARGV_FILE: argvFile }), baseRequest({ outputSchema: loose }));
    const [first, second] = readFileSync(argvFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(first.files.outputSchema).toEqual(strict);
    expect(existsSync(first.argv[first.argv.indexOf('--output-schema') + 1])).toBe(false);
    // OpenAI refuses a schema strict mode cannot hold: troupe checks that one itself
    expect(second.argv).not.toContain('--output-schema');
    expect(strictSchema({ type: 'array', items: loose })).toBe(false);
    expect(strictSchema({ type: 'array', items: strict })).toBe(true);
  });
});

describe('codex with a refused key', () => {
  it('stops at the second 401 reconnect of the captured run (a second in), as auth, not after its five', () => {
    const lines = capturedLines('codex', 'auth-401');
    const parser = new CodexStreamParser();
    const stops: Array<{ at: number; error: RuntimeError }> = [];
    parser.attach({ stop: (error) => stops.push({ at: seen, error }) });
    let seen = 0;
    for (const line of lines) {
      seen += 1;
      parser.line(line);
    }
    parser.dispose();
    expect(stops).toHaveLength(1);
    expect(lines[stops[0]!.at - 1]).toContain('Reconnecting... 2/5');
    expect(stops[0]!.error).toMatchObject({
      kind: 'auth',
      message: expect.stringContaining('401 Unauthorized'),
    });
    expect(stops[0]!.error.hint).toContain('codex login');
  });

  it('lets a rate limit reconnect its five times', () => {
    const parser = new CodexStreamParser();
    const stops: RuntimeError[] = [];
    parser.attach({ stop: (error) => stops.push(error) });
    for (const line of capturedLines('codex', 'api-429')) parser.line(line);
    parser.dispose();
    expect(stops).toEqual([]);
  });
});
