import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { tmpRepo } from '../support/git-repo.js';
import { eventLog } from '../support/troupe.js';
import {
  clisFor,
  E2E_USER,
  FULL,
  gitIn,
  giveTo,
  hasCli,
  nonRootUser,
  parseJson,
  runUntilWaiting,
  scratchHome,
  troupeAs,
  writeJson,
} from './harness.js';
import { startHttpProbe } from './mcp-probe-http.js';
import {
  anthropic,
  gemini,
  type Mock,
  openai,
  startMock,
  type Turn,
  type Vendor,
} from './mock-apis/index.js';

/**
 * The real CLIs through `troupe run`, each against a loopback mock of its vendor's API (pointed
 * at it through the CLI's own base-URL setting, with a fake key): the model's tool calls are
 * carried out by the CLI itself, in the task's worktree.
 */

type Cli = 'claude' | 'gemini' | 'codex';

interface Status {
  id: string;
  status: string;
  error: string | null;
  stages: Array<{
    agent: string;
    status: string;
    output: string;
    usage: { input_tokens: number; output_tokens: number };
    gate: { decision: string } | null;
  }>;
}

interface CliCase {
  vendor: Vendor;
  /** The environment that points the CLI at the mock; `limits`: the one whose limit has a reset. */
  env(
    mock: Mock,
    home: string,
    purpose: 'work' | 'limits',
    bin: (cli: Cli) => string,
  ): Record<string, string>;
  /** A tool call that writes `hello.txt` in the working directory. */
  write: Turn['tool'];
  /** The name of that tool among the tools the CLI offers the model. */
  toolNames(body: Record<string, unknown>): string[];
  /** The agent's model (codex: one whose tools are exec_command and apply_patch). */
  model?: string;
  /** The model's call of the probe MCP server's `probe_tool` (codex: after a `tool_search`); null: none. */
  mcpTurns: Turn[] | null;
}

const CASES: Record<Cli, CliCase> = {
  claude: {
    vendor: anthropic,
    env: (mock, home, purpose, bin) => ({
      HOME: home,
      TROUPE_CLAUDE_BIN: bin('claude'),
      ANTHROPIC_BASE_URL: mock.url,
      // a claude.ai login (a fake OAuth token) reports a limit and its reset (`rate_limit_event`
      // rejected); with an API key Claude Code retries a 429 by itself, 10 times
      ...(purpose === 'work'
        ? { ANTHROPIC_API_KEY: 'sk-ant-fake-e2e' }
        : { CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-fake-e2e' }),
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    }),
    write: {
      name: 'Write',
      input: ({ cwd }) => ({ file_path: join(cwd ?? '.', 'hello.txt'), content: 'hi from the model\n' }),
    },
    toolNames: (body) => (body.tools as Array<{ name: string }>).map((t) => t.name),
    mcpTurns: [{ tool: { name: 'mcp__probe__probe_tool', input: { q: 'word' } } }],
  },
  gemini: {
    vendor: gemini,
    env: (mock, home, _purpose, bin) => {
      // GOOGLE_GEMINI_BASE_URL alone selects "gateway" auth, which headless refuses
      writeJson(join(home, '.gemini', 'settings.json'), {
        security: { auth: { selectedType: 'gemini-api-key' } },
      });
      return {
        HOME: home,
        TROUPE_GEMINI_BIN: bin('gemini'),
        GOOGLE_GEMINI_BASE_URL: mock.url,
        GEMINI_API_KEY: 'fake-gemini-key-e2e',
      };
    },
    write: { name: 'write_file', input: { file_path: 'hello.txt', content: 'hi from the model\n' } },
    toolNames: (body) =>
      (body.tools as Array<{ functionDeclarations?: Array<{ name: string }> }>).flatMap(
        (t) => t.functionDeclarations?.map((f) => f.name) ?? [],
      ),
    mcpTurns: [{ tool: { name: 'mcp_probe_probe_tool', input: { q: 'word' } } }],
  },
  codex: {
    vendor: openai,
    env: (mock, home, _purpose, bin) => {
      // Codex 0.171 ignores OPENAI_BASE_URL; a provider of its own, without WebSockets (the
      // default provider tries a WebSocket 5 times before it falls back to HTTP)
      writeFileSync(
        join(home, '.codex', 'config.toml'),
        `model_provider = "mock"\n[model_providers.mock]\nname = "mock"\nbase_url = "${mock.url}/v1"\nenv_key = "CODEX_API_KEY"\nwire_api = "responses"\nsupports_websockets = false\n`,
      );
      return {
        HOME: home,
        CODEX_HOME: join(home, '.codex'),
        TROUPE_CODEX_BIN: bin('codex'),
        CODEX_API_KEY: 'sk-fake-codex-e2e',
      };
    },
    write: {
      name: 'apply_patch',
      freeform: '*** Begin Patch\n*** Add File: hello.txt\n+hi from the model\n*** End Patch\n',
    },
    toolNames: (body) => (body.tools as Array<{ name?: string }>).map((t) => t.name ?? ''),
    model: 'gpt-5.5',
    // Codex 0.171 defers MCP tools behind `tool_search`, as the Responses API does: the model
    // searches (a `tool_search_call`), Codex answers a `tool_search_output` listing `probe_tool`
    // in the namespace `mcp__probe`, and the model calls it as a `function_call` with that
    // `name` and `namespace`
    mcpTurns: [
      { tool: { name: 'tool_search', search: 'probe' } },
      { tool: { name: 'probe_tool', namespace: 'mcp__probe', input: { q: 'word' } } },
    ],
  },
};

const PROBE = join(dirname(fileURLToPath(import.meta.url)), 'mcp-probe.js');

/** `more.agent`: lines added to the agent (in place of the stdio probe); `more.top`: lines before `agents:`. */
const pipelineFor = (
  cli: Cli,
  mcpLog?: string,
  more: { agent?: string; top?: string } = {},
) => `${more.top ?? ''}agents:
  - id: dev
    runtime: ${cli}${CASES[cli].model ? `\n    model: ${CASES[cli].model}` : ''}${
      mcpLog
        ? `\n    mcp: [{ server: probe, command: node, args: [${JSON.stringify(PROBE)}], env: { MCP_PROBE_LOG: ${JSON.stringify(mcpLog)} } }]`
        : ''
    }
    resume: true
    permissions: edit
    system_prompt: "{{ input }}"
    gate: { type: llm, prompt: "[[script:gate]] Is the file there?" }
    handoffs: [{ to: dev, condition: "again == yes" }]
${more.agent ?? ''}`;

const mocks: Mock[] = [];
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const m of mocks.splice(0)) await m.close();
  for (const close of closers.splice(0)) await close();
});

/**
 * A mock serving `script`, a git repository, the pipeline beside it and a home of its own, all
 * owned by `user` when given; `env` points the CLI at the mock.
 */
async function setup(
  cli: Cli,
  script: Record<string, Turn[]>,
  options: {
    mcp?: boolean;
    user?: string | undefined;
    purpose?: 'work' | 'limits';
    yaml?: { agent?: string; top?: string };
  } = {},
) {
  const mock = await startMock(CASES[cli].vendor, script);
  mocks.push(mock);
  const repo = await tmpRepo();
  const pipeline = join(dirname(repo), 'p.yaml');
  const mcpLog = join(dirname(repo), 'mcp.log');
  writeFileSync(pipeline, pipelineFor(cli, options.mcp ? mcpLog : undefined, options.yaml));
  const home = scratchHome();
  const env = CASES[cli].env(mock, home, options.purpose ?? 'work', clisFor(options.user));
  if (options.user) giveTo(options.user, dirname(repo), home);
  return { mock, repo, pipeline, mcpLog, env };
}

async function devScenario(cli: Cli, user?: string) {
  const c = CASES[cli];
  const { mock, repo, pipeline, env } = await setup(
    cli,
    {
      dev: [
        { tool: c.write!, usage: { input: 1200, output: 30 } },
        { text: 'Wrote hello.txt.\nagain: yes\n[[script:dev2]] go on', usage: { input: 1300, output: 40 } },
      ],
      dev2: [{ text: 'Still there.\nagain: no', usage: { input: 1400, output: 50 } }],
      gate: [{ text: '{"decision": "approved", "reason": "hello.txt written"}' }],
    },
    { user },
  );
  const run = await troupeAs(
    repo,
    ['run', '[[script:dev]] create hello.txt', '--file', pipeline, '--json'],
    env,
    user,
  );
  const task = parseJson<Status>(run);
  expect(task.error, run.stderr).toBeNull();
  expect(task.status).toBe('completed');
  expect(task.stages.map((s) => [s.agent, s.gate?.decision])).toEqual([
    ['dev', 'approved'],
    ['dev', 'approved'],
  ]);

  // as that user indeed: the worktree and the file the CLI wrote are theirs
  if (user) {
    const uid = Number(execFileSync('id', ['-u', user]).toString().trim());
    expect(statSync(join(repo, '.troupe', 'worktrees', task.id, 'hello.txt')).uid).toBe(uid);
  }

  // the edit: the CLI's own tool, in the task's worktree, committed on its branch
  const [first, second] = mock.of('dev');
  expect(first!.answered).toBe('tool');
  expect(c.toolNames(first!.body)).toContain(c.write!.name);
  const toolResult = second!.messages!.find((m) => m.kind === 'tool_result')!;
  expect(toolResult.isError, toolResult.text).toBe(false);
  expect(toolResult.text).toMatch(/hello\.txt/);
  // the CLI ran in the task's worktree (each names its working directory to the model)
  expect(JSON.stringify(first!.body)).toContain(join('.troupe', 'worktrees', task.id));
  expect(await gitIn(repo, 'show', `troupe/${task.id}:hello.txt`)).toBe('hi from the model');

  // usage (at least the mock's figures: the CLIs add their side calls) and the session id
  expect(task.stages[0]!.usage.input_tokens).toBeGreaterThanOrEqual(2500);
  expect(task.stages[0]!.usage.output_tokens).toBeGreaterThanOrEqual(70);
  const done = eventLog(repo, task.id).filter((e) => e.type === 'stage_completed');
  const sessions = done.map((e) => (e.data.meta as Record<string, unknown>).session_id);
  expect(sessions[0]).toMatch(/^[0-9a-f-]{36}$/);

  // resume: true — the second dev stage continues the first one's conversation
  const resumed = mock.of('dev2')[0]!;
  expect(resumed.messages!.map((m) => m.text).join('\n')).toContain('[[script:dev]] create hello.txt');
  expect(resumed.messages!.some((m) => m.kind === 'tool_result' && /hello\.txt/.test(m.text))).toBe(true);
  expect(sessions[1]).toBe(sessions[0]);

  // the gate: a call of its own (a new conversation), given the stage's output
  const gate = mock.of('gate');
  expect(gate).toHaveLength(2);
  expect(gate[0]!.messages!.some((m) => m.role === 'user' && m.text.includes('Wrote hello.txt.'))).toBe(true);
  expect(gate[0]!.messages!.some((m) => m.text.includes('[[script:dev]]'))).toBe(false);
  // claude: the gate's instructions are added to Claude Code's own system prompt, not put in its place
  if (cli === 'claude') {
    const system = JSON.stringify(gate[0]!.body.system);
    expect(system).toContain('You are a quality gate');
    expect(system).toContain('software engineering tasks');
  }
}

/** The probe as a stdio server, or (`remote`) at a `url:` with a header it must receive. */
async function mcpScenario(cli: Cli, user?: string, remote = false) {
  const c = CASES[cli];
  const http = remote ? await startHttpProbe() : null;
  if (http) closers.push(http.close);
  const { mock, repo, pipeline, mcpLog, env } = await setup(
    cli,
    {
      dev: [...(c.mcpTurns ?? []), { text: 'The probe answered.\nagain: no' }],
      gate: [{ text: '{"decision": "approved", "reason": "ok"}' }],
    },
    http
      ? {
          user,
          yaml: {
            agent: `    mcp: [{ server: probe, url: ${JSON.stringify(http.url)}, headers: { X-Probe-Key: probe-key-e2e } }]\n`,
          },
        }
      : { mcp: true, user },
  );
  const run = await troupeAs(
    repo,
    ['run', '[[script:dev]] ask the probe', '--file', pipeline, '--json'],
    env,
    user,
  );
  const task = parseJson<Status>(run);
  expect(task.error, run.stderr).toBeNull();
  expect(task.status).toBe('completed');
  const calls = http
    ? http.calls
    : existsSync(mcpLog)
      ? readFileSync(mcpLog, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { method: string; params?: Record<string, unknown> })
      : [];
  if (http)
    expect(http.calls.find((m) => m.method === 'tools/call')?.headers['x-probe-key']).toBe('probe-key-e2e');
  const last = mock.of('dev').at(-1)!;
  expect(last.answered).toBe('text');
  const result = last.messages!.filter((m) => m.kind === 'tool_result').at(-1)!;
  expect(
    calls.map((m) => m.method),
    result.text,
  ).toContain('tools/call');
  expect(result.text).toContain('TANGERINE-42');
  // the server got the call as the model made it: its own tool name, the model's arguments
  expect(calls.find((m) => m.method === 'tools/call')?.params).toMatchObject({
    name: 'probe_tool',
    arguments: { q: 'word' },
  });
}

/**
 * A refused key ends the task as `auth`, with a hint, at once: the CLI's own retries of the 401
 * (claude 10 over about 3 minutes, codex 5) are cut short at the second refusal.
 */
async function authScenario(cli: Cli) {
  const { mock, repo, pipeline, env } = await setup(cli, {
    dev: [{ fail: { kind: 'auth' }, text: 'never\nagain: no' }],
  });
  const run = await troupeAs(repo, ['run', '[[script:dev]] go', '--file', pipeline, '--json'], env);
  const task = parseJson<Status & { hint?: string }>(run);
  expect(task.status, run.stderr).toBe('failed');
  const failed = eventLog(repo, task.id).find((e) => e.type === 'task_failed');
  expect(failed?.data.errorKind, String(failed?.data.reason)).toBe('auth');
  expect(task.hint).toBeTruthy();
  const refused = mock.of('dev');
  expect(refused.length).toBeGreaterThan(0);
  expect(refused.length, 'requests made with the refused key').toBeLessThanOrEqual(3);
  expect(refused.every((r) => r.answered === 'auth')).toBe(true);
}

/** The API fails once (a 500, or a connection closed unanswered): the CLI retries, the task completes. */
async function transientFailureScenario(cli: Cli, kind: 'server' | 'drop') {
  const { mock, repo, pipeline, env } = await setup(cli, {
    dev: [{ fail: { kind, times: 1 }, text: `done after a ${kind} failure\nagain: no` }],
    gate: [{ text: '{"decision": "approved", "reason": "ok"}' }],
  });
  const run = await troupeAs(repo, ['run', '[[script:dev]] go', '--file', pipeline, '--json'], env);
  const task = parseJson<Status>(run);
  expect(task.error, run.stderr).toBeNull();
  expect(task.status).toBe('completed');
  expect(task.stages.map((s) => s.output)).toEqual([`done after a ${kind} failure\nagain: no`]);
  expect(mock.of('dev').map((r) => r.answered)).toEqual([kind, 'text']);
}

/** `permissions: read_only`: the model's write is refused by the CLI, nothing lands, the model hears back. */
async function readOnlyScenario(cli: Cli) {
  const c = CASES[cli];
  const { mock, repo, pipeline, env } = await setup(cli, {
    dev: [{ tool: c.write! }, { text: 'could not write\nagain: no' }],
    gate: [{ text: '{"decision": "approved", "reason": "ok"}' }],
  });
  writeFileSync(
    pipeline,
    readFileSync(pipeline, 'utf8').replace('permissions: edit', 'permissions: read_only'),
  );
  const run = await troupeAs(
    repo,
    ['run', '[[script:dev]] create hello.txt', '--file', pipeline, '--json'],
    env,
  );
  const task = parseJson<Status>(run);
  expect(task.error, run.stderr).toBeNull();
  expect(existsSync(join(repo, '.troupe', 'worktrees', task.id, 'hello.txt'))).toBe(false);
  expect(existsSync(join(repo, 'hello.txt'))).toBe(false);
  const [, second] = mock.of('dev');
  const answer = second?.messages?.filter((m) => m.kind === 'tool_result').at(-1);
  expect(answer, 'the CLI answered the refused call to the model').toBeDefined();
  expect(answer!.text).not.toMatch(/^(?:Wrote|Successfully|Created)/i);
  if (cli === 'claude') expect(answer!.isError).toBe(true);
}

/** Gives the user an MCP server of their own, in each CLI's user config, logging to `log`. */
function userMcpServer(cli: Cli, home: string, log: string): void {
  const server = { command: 'node', args: [PROBE], env: { MCP_PROBE_LOG: log } };
  if (cli === 'claude') writeJson(join(home, '.claude.json'), { mcpServers: { userprobe: server } });
  else if (cli === 'gemini') {
    const file = join(home, '.gemini', 'settings.json');
    writeJson(file, { ...JSON.parse(readFileSync(file, 'utf8')), mcpServers: { userprobe: server } });
  } else {
    const toml = `\n[mcp_servers.userprobe]\ncommand = "node"\nargs = [${JSON.stringify(PROBE)}]\nenv = { MCP_PROBE_LOG = ${JSON.stringify(log)} }\n`;
    writeFileSync(
      join(home, '.codex', 'config.toml'),
      readFileSync(join(home, '.codex', 'config.toml'), 'utf8') + toml,
    );
  }
}

/** The user's own MCP servers stay out of a task, with or without servers of the agent's. */
async function userMcpScenario(cli: Cli, agentMcp: boolean) {
  const { mock, repo, pipeline, mcpLog, env } = await setup(
    cli,
    {
      dev: [{ text: 'done\nagain: no' }],
      gate: [{ text: '{"decision": "approved", "reason": "ok"}' }],
    },
    { mcp: agentMcp },
  );
  const userLog = join(dirname(repo), 'user-mcp.log');
  userMcpServer(cli, env.HOME!, userLog);
  const run = await troupeAs(repo, ['run', '[[script:dev]] go', '--file', pipeline, '--json'], env);
  const task = parseJson<Status>(run);
  expect(task.error, run.stderr).toBeNull();
  expect(existsSync(userLog), "the user's own MCP server was started").toBe(false);
  expect(JSON.stringify(mock.of('dev')[0]!.body)).not.toContain('userprobe');
  // the agent's own server was started (and would be offered)
  if (agentMcp) expect(existsSync(mcpLog)).toBe(true);
}

const ANSWER_SCHEMA = {
  type: 'object',
  properties: { answer: { type: 'string' } },
  required: ['answer'],
  additionalProperties: false,
};

/** `output_schema:` reaches the CLI (claude --json-schema, codex --output-schema) and its answer is the output. */
async function schemaScenario(cli: 'claude' | 'codex') {
  const { mock, repo, pipeline, env } = await setup(
    cli,
    {
      dev:
        cli === 'claude'
          ? [{ tool: { name: 'StructuredOutput', input: { answer: 'forty-two' } } }]
          : [{ text: '{"answer":"forty-two"}' }],
      gate: [{ text: '{"decision": "approved", "reason": "ok"}' }],
    },
    { yaml: { agent: `    output_schema: ${JSON.stringify(ANSWER_SCHEMA)}\n` } },
  );
  const run = await troupeAs(repo, ['run', '[[script:dev]] answer', '--file', pipeline, '--json'], env);
  const task = parseJson<Status>(run);
  expect(task.error, run.stderr).toBeNull();
  expect(task.status).toBe('completed');
  expect(JSON.parse(task.stages[0]!.output)).toEqual({ answer: 'forty-two' });
  const body = mock.of('dev')[0]!.body;
  if (cli === 'claude') {
    const tool = (body.tools as Array<{ name: string; input_schema: unknown }>).find(
      (t) => t.name === 'StructuredOutput',
    );
    expect(JSON.stringify(tool?.input_schema)).toContain('"answer"');
  } else {
    expect(body.text.format).toMatchObject({ type: 'json_schema', strict: true, schema: ANSWER_SCHEMA });
  }
}

/** claude stops itself at the task's `budget.usd` (--max-budget-usd): the task fails as budget. */
async function budgetScenario() {
  const { mock, repo, pipeline, env } = await setup(
    'claude',
    {
      // about $1 of input at Claude's prices: past the budget after the first call
      dev: [
        {
          tool: { name: 'Read', input: ({ cwd }) => ({ file_path: join(cwd ?? '.', 'README.md') }) },
          usage: { input: 200_000, output: 1000 },
        },
        { text: 'done\nagain: no' },
      ],
      gate: [{ text: '{"decision": "approved", "reason": "ok"}' }],
    },
    { yaml: { top: 'budget: { usd: 0.05 }\n' } },
  );
  const run = await troupeAs(repo, ['run', '[[script:dev]] go', '--file', pipeline, '--json'], env);
  const task = parseJson<Status>(run);
  expect(task.status, run.stderr).toBe('failed');
  expect(mock.of('dev')).toHaveLength(1);
  const failed = eventLog(repo, task.id).find((e) => e.type === 'task_failed');
  expect(failed?.data.errorKind).toBe('budget');
  expect(String(failed?.data.reason)).toMatch(/Reached maximum budget \(\$0\.05\)/);
}

async function limitScenario(cli: Cli) {
  const { mock, repo, pipeline, env } = await setup(
    cli,
    {
      dev: [{ limit: { resetAfterS: 2 }, text: 'done after the limit\nagain: no' }],
      gate: [{ text: '{"decision": "approved", "reason": "ok"}' }],
    },
    { purpose: 'limits' },
  );
  const { child, id } = await runUntilWaiting(repo, ['run', '[[script:dev]] go', '--file', pipeline], env);
  const during = parseJson<Status>(await troupeAs(repo, ['status', id, '--json'], env));
  expect(during.status).toBe('waiting');
  const run = await child;
  expect(run.exitCode, String(run.stderr)).toBe(0);
  // the provider is the runtime, the endpoint and the account it was limited on
  // (`claude@127.0.0.1:<port>#<key fingerprint>`)
  expect(String(run.stderr)).toMatch(new RegExp(`${cli}(@[^ #]+)?(#\\w+)? is limited; waiting until`));
  const done = parseJson<Status>(await troupeAs(repo, ['status', id, '--json'], env));
  expect(done.status).toBe('completed');
  expect(done.stages.map((s) => s.output)).toEqual(['done after the limit\nagain: no']);
  const calls = mock.of('dev');
  expect(calls.map((r) => r.answered)).toEqual(['limit', 'text']);
  // not before the reset the 429 named
  expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(1000);
  expect(String(eventLog(repo, id).find((e) => e.type === 'rate_limited')?.data.provider)).toMatch(
    new RegExp(`^${cli}(@[^ #]+)?(#\\w+)?$`),
  );
}

/**
 * claude, `resume: true`: the agent's consecutive stages are turns of one process kept up
 * (claude-stream-session.ts); Claude probes its API (`HEAD /`) once a process.
 */
async function keptUpScenario() {
  const { mock, repo, pipeline, env } = await setup('claude', {
    dev: [{ text: 'first turn\nagain: yes\n[[script:dev2]] go on' }],
    dev2: [{ text: 'second turn\nagain: no' }],
  });
  writeFileSync(
    pipeline,
    'agents:\n  - id: dev\n    runtime: claude\n    resume: true\n    system_prompt: "{{ input }}"\n    handoffs: [{ to: dev, condition: "again == yes" }]\n',
  );
  const run = await troupeAs(repo, ['run', '[[script:dev]] start', '--file', pipeline, '--json'], env);
  const task = parseJson<Status>(run);
  expect(task.error, run.stderr).toBeNull();
  expect(task.stages.map((s) => s.output)).toEqual([
    'first turn\nagain: yes\n[[script:dev2]] go on',
    'second turn\nagain: no',
  ]);
  const resumed = mock.of('dev2')[0]!;
  expect(resumed.messages!.map((m) => m.text).join('\n')).toContain('[[script:dev]] start');
  expect(mock.requests.filter((r) => r.method === 'HEAD')).toHaveLength(1);
  const sessions = eventLog(repo, task.id)
    .filter((e) => e.type === 'stage_completed')
    .map((e) => (e.data.meta as Record<string, unknown>).session_id);
  expect(sessions[1]).toBe(sessions[0]);
  // each stage records its own turn's usage, not the process's running total
  expect(task.stages[1]!.usage.input_tokens).toBe(task.stages[0]!.usage.input_tokens);
}

/** Root: the scenarios run once more as a user of their own (made on first use). */
const AS_ROOT = process.getuid?.() === 0;

// `npm test` runs the quick ones (claude and codex answer in about a second each; gemini takes
// several); `npm run test:real-clis` (FULL) runs everything
for (const cli of ['claude', 'gemini', 'codex'] as const) {
  const c = CASES[cli];
  const quick = cli !== 'gemini';
  describe.skipIf(!hasCli(cli))(`${cli} (the real binary, a mock of its API)`, () => {
    it.skipIf(!FULL && !quick)(
      "a tool call writes a file in the task's worktree; usage and session recorded; resume: true continues; the gate judges",
      () => devScenario(cli),
      90_000,
    );

    // codex names the reset to the minute ("try again at 8:51 PM"): troupe may wait ~30 s more
    it.skipIf(!FULL)(
      'a 429 with a reset makes the task wait (status waiting), then it carries on by itself',
      () => limitScenario(cli),
      120_000,
    );

    // named fast: the test's own time limit is the bound (claude alone would retry for 3 minutes)
    it.skipIf(!FULL && !quick)(
      'a refused key (the API answers 401) fails the task as auth with a hint, without waiting out the retries',
      () => authScenario(cli),
      30_000,
    );

    it.skipIf(!FULL)(
      'a 500 from the API is retried by the CLI, and the task completes',
      () => transientFailureScenario(cli, 'server'),
      90_000,
    );

    it.skipIf(!FULL)(
      'a connection dropped unanswered is retried by the CLI, and the task completes',
      () => transientFailureScenario(cli, 'drop'),
      90_000,
    );

    it.skipIf(!FULL)(
      "permissions: read_only: the model's write is refused, nothing lands in the worktree",
      () => readOnlyScenario(cli),
      90_000,
    );

    it.skipIf(cli !== 'claude')(
      "resume: true: the agent's consecutive stages are turns of one process, with the same conversation",
      () => keptUpScenario(),
      90_000,
    );

    it.skipIf(!c.mcpTurns || (!FULL && cli !== 'claude'))(
      "an MCP tool of the agent's own is called, and its result reaches the model",
      () => mcpScenario(cli),
      90_000,
    );

    it.skipIf(!c.mcpTurns || !FULL)(
      "a remote MCP server (url:, with headers) of the agent's own is called, and its result reaches the model",
      () => mcpScenario(cli, undefined, true),
      90_000,
    );

    it.skipIf(!FULL)(
      "the user's own MCP servers stay out of a task without MCP servers",
      () => userMcpScenario(cli, false),
      90_000,
    );

    it.skipIf(!FULL)(
      "the user's own MCP servers stay out of a task with MCP servers of its own",
      () => userMcpScenario(cli, true),
      90_000,
    );

    it.skipIf(cli === 'gemini' || !FULL)(
      "output_schema reaches the CLI's own structured output, whose answer is the stage's output",
      () => schemaScenario(cli as 'claude' | 'codex'),
      90_000,
    );

    it.skipIf(cli !== 'claude' || !FULL)(
      'budget.usd stops claude itself (--max-budget-usd): the task fails as budget',
      () => budgetScenario(),
      90_000,
    );
  });

  // as root the tests above ran as root; the same again as a user of their own
  describe.skipIf(!hasCli(cli) || !AS_ROOT || !FULL)(`${cli} as a non-root user (${E2E_USER})`, () => {
    it(
      'the file lands, usage, session, resume and the gate, as above',
      () => devScenario(cli, nonRootUser()!),
      90_000,
    );
    it.skipIf(!c.mcpTurns)(
      'the MCP tool is called, as above',
      () => mcpScenario(cli, nonRootUser()!),
      90_000,
    );
  });
}
