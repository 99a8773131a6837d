import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RuntimeError } from '../core/runtime.js';
import { AUTH_RETRIES_BEFORE_STOP, ClaudeStreamParser, claudeArgs, claudeRuntime } from './claude.js';
import {
  baseRequest,
  type ContractFixtures,
  capturedLines,
  collect,
  failureOf,
  fakeCli,
  runtimeContract,
} from './contract.js';

// the captures were made on 2026-11-29 around 10:02 UTC
const NOW = new Date('2026-11-29T10:02:30Z');
const make = (scenario: string, env: Record<string, string> = {}) =>
  claudeRuntime({ bin: fakeCli('claude'), env: { FAKE_CLI_SCENARIO: scenario, ...env }, now: () => NOW });

const CONTRACT: ContractFixtures = {
  success: {
    scenario: 'success-stream-json',
    text: 'hi from mock',
    sessionId: 'f977f2f1-8abb-4ba6-9a23-5d722df1bdcd',
    usage: { input_tokens: 42, output_tokens: 12, cache_read_tokens: 7, cost_usd: 0.0005135000000000001 },
  },
  failures: [
    { scenario: 'not-logged-in-stream-json', kind: 'auth' },
    { scenario: 'not-logged-in', kind: 'auth' },
    { scenario: 'usage-limit-5h', kind: 'usage_limit', resetAt: new Date(1795953727 * 1000) },
    { scenario: 'usage-limit-weekly', kind: 'usage_limit', resetAt: new Date(1796212958 * 1000) },
    { scenario: 'usage-limit-5h-json', kind: 'usage_limit', resetAt: new Date('2026-11-29T12:02:00Z') },
    { scenario: 'usage-limit-5h-text', kind: 'usage_limit', resetAt: new Date('2026-11-29T12:02:00Z') },
    { scenario: 'api-429', kind: 'rate_limited' },
    { scenario: 'auth-401', kind: 'auth' },
    { scenario: 'credit-balance', kind: 'quota_billing' },
    { scenario: 'overloaded-529', kind: 'overloaded' },
    { scenario: 'overloaded-529-max-retries-1', kind: 'overloaded' },
    { scenario: 'no-network', kind: 'network' },
    { scenario: 'resume-not-found', kind: 'session_not_found' },
    { scenario: 'root-skip-permissions-refused', kind: 'permission_denied' },
    { scenario: 'stream-json-requires-verbose', kind: 'crashed' },
    { scenario: 'max-turns', kind: 'crashed' },
  ],
  hang: { scenario: 'hang', pids: true },
  rawLog: true,
  argv: 'argv',
};
runtimeContract('claude', make, CONTRACT);
// a `resume: true` stage, served by a process kept up between stages (claude-stream-session.ts)
runtimeContract('claude, kept up', make, { ...CONTRACT, request: { keepSession: true } });

describe('claude runtime', () => {
  it('builds the argv from the request: model, effort, permissions, MCP, resume, cli_flags, prompt last', () => {
    const { args } = claudeArgs(
      baseRequest({
        model: 'sonnet',
        effort: 'high',
        permissions: 'edit',
        resumeSessionId: 'abc',
        extraFlags: ['--max-turns', '5'],
        prompt: '-starts with a dash',
      }),
      '/tmp/mcp.json',
    );
    expect(args).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--include-partial-messages',
      '--model',
      'sonnet',
      '--effort',
      'high',
      '--permission-mode',
      'acceptEdits',
      '--mcp-config',
      '/tmp/mcp.json',
      '--strict-mcp-config',
      '--resume',
      'abc',
      '--max-turns',
      '5',
      '--',
      '-starts with a dash',
    ]);
  });

  it('reads only outside a troupe worktree and edits inside one, unless the pipeline says', () => {
    const mode = (cwd: string, extra: Partial<Parameters<typeof baseRequest>[0]> = {}) => {
      const { args } = claudeArgs(baseRequest({ cwd, ...extra }), null);
      const at = args.indexOf('--permission-mode');
      return at === -1 ? null : args[at + 1];
    };
    expect(mode('/home/me/project')).toBe('default');
    expect(mode('/home/me/project/.troupe/worktrees/T-123456')).toBe('acceptEdits');
    expect(mode('/home/me/project', { permissions: 'full' })).toBe('bypassPermissions');
    expect(mode('/home/me/project', { extraFlags: ['--dangerously-skip-permissions'] })).toBeNull();
  });

  it("gives a gate its system prompt on top of Claude Code's, and no session to keep; a stage only its prompt", () => {
    const gate = claudeArgs(baseRequest({ purpose: 'gate', systemPrompt: 'judge' }), null).args;
    const at = gate.indexOf('--append-system-prompt');
    expect(gate.slice(at, at + 2)).toEqual(['--append-system-prompt', 'judge']);
    expect(gate).not.toContain('--system-prompt');
    expect(gate).toContain('--no-session-persistence');
    const stage = claudeArgs(baseRequest({ systemPrompt: 'judge' }), null).args;
    expect(stage).not.toContain('--append-system-prompt');
    expect(stage).not.toContain('--no-session-persistence');
  });

  it('holds the answer to output_schema with --json-schema, and stops at the budget left', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const { args } = claudeArgs(baseRequest({ outputSchema: schema, maxBudgetUsd: 0.123456 }), null);
    expect(args.slice(args.indexOf('--json-schema'), args.indexOf('--json-schema') + 2)).toEqual([
      '--json-schema',
      JSON.stringify(schema),
    ]);
    expect(args.slice(args.indexOf('--max-budget-usd'), args.indexOf('--max-budget-usd') + 2)).toEqual([
      '--max-budget-usd',
      '0.1234',
    ]);
    // a spent budget still gives the CLI a limit, never "none"
    const spent = claudeArgs(baseRequest({ maxBudgetUsd: 0 }), null).args;
    expect(spent[spent.indexOf('--max-budget-usd') + 1]).toBe('0.0001');
    const plain = claudeArgs(baseRequest(), null).args;
    expect(plain).not.toContain('--json-schema');
    expect(plain).not.toContain('--max-budget-usd');
  });

  it("takes the structured output as the stage's output", async () => {
    const events = await collect(make('structured-output'), baseRequest());
    expect(events.at(-1)).toMatchObject({ type: 'result', text: '{"answer":"forty-two"}' });
    // the object, even where the result's text is something else
    const parser = new ClaudeStreamParser();
    parser.line(
      JSON.stringify({
        type: 'result',
        subtype: 'success',
        is_error: false,
        result: 'Here is the answer.',
        structured_output: { answer: 'forty-two' },
      }),
    );
    expect(parser.finish({ exitCode: 0, signal: null, stderr: '' })).toMatchObject({
      text: '{"answer":"forty-two"}',
    });
  });

  it('ends a run stopped by --max-budget-usd as budget, not crashed', async () => {
    const error = await failureOf(make('max-budget'), baseRequest());
    expect(error.kind).toBe('budget');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('Reached maximum budget ($0.01)');
    expect(error.hint).toContain('budget.usd');
  });

  it('writes a remote MCP server as {type, url, headers} and allows its tools', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'troupe-claude-'));
    const argvFile = path.join(dir, 'argv.jsonl');
    await collect(
      make('success-stream-json', { FAKE_CLI_ARGV_FILE: argvFile }),
      baseRequest({
        mcp: [
          {
            server: 'docs',
            command: null,
            args: [],
            env: null,
            url: 'https://mcp.example.com/mcp',
            headers: { Authorization: 'Bearer t' },
            transport: 'http',
          },
          {
            server: 'old',
            command: null,
            args: [],
            env: null,
            url: 'https://old.example.com/sse',
            transport: 'sse',
          },
        ],
      }),
    );
    const seen = JSON.parse(readFileSync(argvFile, 'utf8'));
    expect(seen.files.mcpConfig).toEqual({
      mcpServers: {
        docs: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer t' } },
        old: { type: 'sse', url: 'https://old.example.com/sse', headers: {} },
      },
    });
    expect(seen.argv[seen.argv.indexOf('--allowedTools') + 1]).toBe('mcp__docs,mcp__old');
  });

  it('passes MCP servers in a temp file that is gone after the run, and a long prompt on stdin', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'troupe-claude-'));
    const argvFile = path.join(dir, 'argv.jsonl');
    const prompt = 'x'.repeat(150_000);
    await collect(
      make('success-stream-json', { FAKE_CLI_ARGV_FILE: argvFile }),
      baseRequest({
        prompt,
        mcp: [
          { server: 'github', command: null, args: ['--ro'], env: { TOKEN: 't' } },
          { server: 'db', command: 'db-mcp', args: [], env: null },
        ],
      }),
    );
    const seen = JSON.parse(readFileSync(argvFile, 'utf8'));
    expect(seen.files.mcpConfig).toEqual({
      mcpServers: {
        github: {
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-github', '--ro'],
          env: { TOKEN: 't' },
        },
        db: { command: 'db-mcp', args: [], env: {} },
      },
    });
    expect(existsSync(seen.argv[seen.argv.indexOf('--mcp-config') + 1])).toBe(false);
    // without a rule allowing them, `default` and `acceptEdits` refuse every MCP tool call
    expect(
      seen.argv.slice(seen.argv.indexOf('--allowedTools'), seen.argv.indexOf('--allowedTools') + 2),
    ).toEqual(['--allowedTools', 'mcp__github,mcp__db']);
    expect(seen.argv.join(' ')).not.toContain('xxxx');
    expect(seen.stdin).toBe(prompt);
  });

  it('streams tool use and its results', async () => {
    const events = await collect(make('tool-use'), baseRequest());
    expect(events.filter((e) => e.type === 'tool_start' || e.type === 'tool_result')).toEqual([
      {
        type: 'tool_start',
        id: 'toolu_mock1',
        name: 'Read',
        input: { file_path: '/home/user/project/hello.txt' },
      },
      { type: 'tool_result', id: 'toolu_mock1', output: '1\thello-file-content\n2\t' },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'result', text: 'hi from mock', meta: { num_turns: 2 } });
  });

  it('reports a blocked tool call as a failed tool result and a warning, not a failed stage', async () => {
    const events = await collect(make('tool-use-permission-denied'), baseRequest());
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ isError: true });
    expect(events.filter((e) => e.type === 'notice')).toEqual([
      {
        type: 'notice',
        level: 'warning',
        message: expect.stringMatching(
          /^claude refused 1 tool call its permission mode does not allow: Bash \(touch \/home\/user\/project\/created\.txt\) — /,
        ),
      },
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'result', meta: { permission_denials: 1 } });
  });

  it('names a refused MCP tool call in its warning', async () => {
    const events = await collect(make('mcp-tool-refused'), baseRequest());
    expect(events.filter((e) => e.type === 'notice').map((e) => (e as { message: string }).message)).toEqual([
      expect.stringMatching(
        /^claude refused 1 tool call its permission mode does not allow: mcp__probe__probe_tool — /,
      ),
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'result', meta: { permission_denials: 1 } });
  });

  it("loads no MCP server of the user's own, with or without servers of its agent", () => {
    expect(claudeArgs(baseRequest(), null).args).toContain('--strict-mcp-config');
    expect(claudeArgs(baseRequest(), null).args).not.toContain('--allowedTools');
  });

  it('turns a rate-limit warning into a notice and still succeeds', async () => {
    const events = await collect(make('success-rate-limit-warning'), baseRequest());
    expect(events).toContainEqual({ type: 'notice', level: 'warning', message: 'five_hour limit 91% used' });
    expect(events.at(-1)).toMatchObject({ type: 'result', text: 'hi from mock' });
  });

  it('skips lines that are not JSON', async () => {
    const events = await collect(make('malformed'), baseRequest());
    expect(events.at(-1)).toMatchObject({ type: 'result', text: 'hi from mock' });
  });

  it('keeps the session id and what was streamed on a failure', async () => {
    const error = await failureOf(make('usage-limit-5h'), baseRequest());
    expect(error.options.meta).toMatchObject({ session_id: '13a0c5e2-0e05-4936-84b4-2d3d2c6e70d8' });
    expect(error.message).toBe("You've hit your session limit · resets 12:02pm (UTC)");
    expect(error.hint).toContain('reset');
  });

  it('keeps stderr beside the raw stream', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'troupe-claude-'));
    await failureOf(make('resume-not-found'), baseRequest({ rawLogPath: path.join(dir, '2.jsonl') }));
    expect(readFileSync(path.join(dir, '2.stderr'), 'utf8')).toContain('No conversation found');
    const raw = readFileSync(path.join(dir, '2.jsonl'), 'utf8').split('\n');
    expect(JSON.parse(raw[0]!)).toMatchObject({ type: 'troupe.spawn', runtime: 'claude' });
  });

  it('kills a CLI that ignores SIGTERM', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'troupe-claude-'));
    const pidFile = path.join(dir, 'pids');
    const controller = new AbortController();
    const run = failureOf(
      make('hang-stubborn', { FAKE_CLI_PIDFILE: pidFile }),
      baseRequest({ signal: controller.signal }),
    );
    while (!existsSync(pidFile) || !readFileSync(pidFile, 'utf8').includes(' '))
      await new Promise((r) => setTimeout(r, 20));
    controller.abort(new RuntimeError('cancelled', 'task cancelled'));
    expect((await run).kind).toBe('cancelled');
    const pids = readFileSync(pidFile, 'utf8').split(' ').map(Number);
    const alive = () =>
      pids.filter((pid) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      });
    // SIGKILL is not instant on a loaded machine: wait for it (a survivor fails after 5 s)
    for (let i = 0; i < 100 && alive().length > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive()).toEqual([]);
  });

  it('says how to install a missing CLI', async () => {
    const error = await failureOf(claudeRuntime({ bin: '/nonexistent/claude' }), baseRequest());
    expect(error.kind).toBe('missing_cli');
    expect(error.hint).toContain('npm i -g @anthropic-ai/claude-code');
  });

  it('takes text from partial-message deltas without repeating the full message', () => {
    const parser = new ClaudeStreamParser();
    const delta = (text: string) =>
      JSON.stringify({
        type: 'stream_event',
        event: { type: 'content_block_delta', delta: { type: 'text_delta', text } },
      });
    const lines = [
      JSON.stringify({ type: 'stream_event', event: { type: 'message_start', message: { id: 'm1' } } }),
      delta('hi '),
      delta('there'),
      JSON.stringify({
        type: 'assistant',
        message: { id: 'm1', content: [{ type: 'text', text: 'hi there' }] },
      }),
    ];
    const texts = lines.flatMap((l) => parser.line(l)).flatMap((e) => (e.type === 'text' ? [e.text] : []));
    expect(texts).toEqual(['hi ', 'there']);
  });
});

describe('claude with refused credentials', () => {
  const captured = (scenario: string) => capturedLines('claude', scenario);
  const stopsOf = (lines: string[]) => {
    const parser = new ClaudeStreamParser();
    const stops: RuntimeError[] = [];
    parser.attach({ stop: (error) => stops.push(error) });
    for (const line of lines) parser.line(line);
    return stops;
  };

  it('stops at the second `authentication_failed` retry of the captured 401, as auth with a hint naming the key', () => {
    const lines = captured('auth-401');
    const retries = lines.filter((l) => l.includes('"subtype":"api_retry"'));
    expect(retries).toHaveLength(10);
    const stops = stopsOf(lines.slice(0, 1 + AUTH_RETRIES_BEFORE_STOP));
    expect(stops).toHaveLength(1);
    expect(stops[0]).toMatchObject({ kind: 'auth' });
    expect(stops[0]!.message).toContain('(401)');
    expect(stops[0]!.hint).toBe(
      'ANTHROPIC_API_KEY was refused: set a valid key in it, or unset it and log in with `claude /login`',
    );
    // asked once, whatever follows
    expect(stopsOf(lines)).toHaveLength(1);
  });

  it('lets one refusal pass (an OAuth token claude refreshes), and other retries (429, offline) run their course', () => {
    const [init, firstAuthRetry] = captured('auth-401');
    expect(stopsOf([init!, firstAuthRetry!, ...captured('success-stream-json').slice(1)])).toEqual([]);
    expect(stopsOf(captured('api-429'))).toEqual([]);
    expect(stopsOf(captured('no-network'))).toEqual([]);
  });

  it.each([
    ['one process a stage', {}],
    ['kept up between stages', { keepSession: true }],
  ])(
    'fails within seconds, not after three minutes of retries, and leaves no process (%s)',
    async (_, request) => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'troupe-claude-'));
      const argvFile = path.join(dir, 'argv.jsonl');
      // the fake waits each retry's captured delay, as the real CLI did: about three minutes in all
      const runtime = make('auth-401', { FAKE_CLI_RETRY_DELAYS: 'real', FAKE_CLI_ARGV_FILE: argvFile });
      const error = await failureOf(runtime, baseRequest(request));
      expect(error).toMatchObject({ kind: 'auth' });
      expect(error.hint).toContain('ANTHROPIC_API_KEY was refused');
      expect(error.options.meta).toMatchObject({ session_id: '546b6fac-ab78-45eb-90af-5635f8860fa0' });
      const { pid } = JSON.parse(readFileSync(argvFile, 'utf8').trim().split('\n')[0]!) as { pid: number };
      expect(() => process.kill(pid, 0)).toThrow();
    },
    20_000,
  );
});
