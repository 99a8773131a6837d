import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project, repoRoot, troupe } from './support/troupe.js';

const fake = (cli: string) => join(repoRoot, 'test', 'fixtures', 'fake-clis', cli);

describe('real runtimes through `troupe run` (fake CLIs replaying captured output)', () => {
  it('claude: streamed output and usage recorded, the raw stream kept, and resume: true continues the CLI session in the same process', async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: writer
    runtime: claude
    resume: true
    system_prompt: "Write: {{ input }}"
    handoffs: [{to: writer}]
`,
      '.troupe/config.yaml': 'pipeline:\n  max_stages: 2\n',
    });
    const argvFile = join(dir, 'argv.jsonl');
    const run = await troupe(dir, ['run', 'a haiku', '--file', 'p.yaml', '--json'], {
      TROUPE_CLAUDE_BIN: fake('claude'),
      FAKE_CLI_ARGV_FILE: argvFile,
    });
    const json = JSON.parse(run.stdout);
    // the self-loop ends at max_stages, after two real calls
    expect(json.error).toBe('Exceeded maximum number of stages (2).');
    expect(json.stages).toHaveLength(2);
    expect(json.stages[0].output.length).toBeGreaterThan(0);
    expect(json.stages[0].usage.output_tokens).toBeGreaterThan(0);
    const calls = readFileSync(argvFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { argv: string[]; stdin: string });
    // both stages are turns of one claude process kept up for the agent's conversation (the
    // fake records each turn with its argv): the second one's prompt continues it on stdin
    expect(calls).toHaveLength(2);
    expect(calls[0]!.argv.slice(0, 3)).toEqual(['-p', '--input-format', 'stream-json']);
    expect(calls[1]!.argv).toEqual(calls[0]!.argv);
    expect(calls[1]!.argv).not.toContain('--resume');
    expect(JSON.parse(calls[1]!.stdin).message.content).toContain('hi from mock');
    expect(existsSync(join(dir, '.troupe', 'tasks', json.id, 'raw', '1.jsonl'))).toBe(true);
  });

  it('an llm gate can run on another runtime than the agent it judges', async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: writer
    runtime: claude
    system_prompt: "Write: {{ input }}"
    gate: {type: llm, runtime: gemini, max_retries: 1}
`,
    });
    const argvFile = join(dir, 'argv.jsonl');
    await troupe(dir, ['run', 'x', '--file', 'p.yaml'], {
      TROUPE_CLAUDE_BIN: fake('claude'),
      TROUPE_GEMINI_BIN: fake('gemini'),
      FAKE_CLI_ARGV_FILE: argvFile,
    });
    const clis = readFileSync(argvFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { cli: string }).cli);
    expect(clis.slice(0, 2)).toEqual(['claude', 'gemini']);
  });

  it('a missing CLI fails the stage as missing_cli with the install hint, not a crash', async () => {
    const dir = project({ 'p.yaml': 'agents:\n  - id: a\n    runtime: codex\n' });
    const run = await troupe(dir, ['run', 'x', '--file', 'p.yaml', '--json'], {
      TROUPE_CODEX_BIN: join(dir, 'no-such-codex'),
    });
    const json = JSON.parse(run.stdout);
    expect(run.code).toBe(1);
    expect(json.stages[0].error.kind).toBe('missing_cli');
  });
});

describe('what a runtime warns about is shown, never dropped', () => {
  it('a tool call claude refused is a warning in `run` and in `status`', async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: dev
    runtime: claude
    system_prompt: "Create: {{ input }}"
`,
    });
    const env = { TROUPE_CLAUDE_BIN: fake('claude'), FAKE_CLI_SCENARIO: 'tool-use-permission-denied' };
    const run = await troupe(dir, ['run', 'created.txt', '--file', 'p.yaml'], env);
    expect(run.stderr).toMatch(/⚠ \[1\] dev: claude refused 1 tool call .*: Bash \(touch /);
    const id = /troupe (T-\S+)/.exec(run.stderr)?.[1];
    expect(id).toBeDefined();
    const status = await troupe(dir, ['status', id!], env);
    expect(status.stdout).toMatch(/\[1\] dev .*\n\s+⚠ claude refused 1 tool call/);
  });

  it('doctor without a pipeline says that none was checked, not "ready"', async () => {
    const dir = project({});
    const doctor = await troupe(dir, ['doctor'], {
      TROUPE_CLAUDE_BIN: fake('claude'),
      TROUPE_GEMINI_BIN: fake('gemini'),
      TROUPE_CODEX_BIN: fake('codex'),
      FAKE_CLI_SCENARIO: 'not-logged-in',
    });
    expect(doctor.stdout).toContain('· no pipeline checked: no pipeline found in');
    expect(doctor.stdout).toContain('checked the three CLIs only');
    expect(doctor.stdout).not.toMatch(/^✓ ready$/m);
    expect(doctor.stdout).toMatch(/^· ready to run headless here: none of the three$/m);
    expect(doctor.stdout).toMatch(/^· codex 0\.171\.0: /m);
  });
});

describe('a failed stage says what to do about it, and how long it took', () => {
  const claudePipeline =
    'agents:\n  - id: writer\n    runtime: claude\n    system_prompt: "Write: {{ input }}"\n';
  const notLoggedIn = { TROUPE_CLAUDE_BIN: fake('claude'), FAKE_CLI_SCENARIO: 'not-logged-in-stream-json' };
  const loginHint = 'log in: run `claude` once and use /login';

  it("`run` and `status` print the runtime error's hint, and --json carries it", async () => {
    const dir = project({ 'p.yaml': claudePipeline });
    const run = await troupe(dir, ['run', 'x', '--file', 'p.yaml'], notLoggedIn);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/✗ \[1\] writer.*auth: Not logged in.*\n {2}hint: log in: run `claude` once/);
    const id = /troupe (T-\S+)/.exec(run.stderr)![1]!;
    const status = await troupe(dir, ['status', id]);
    expect(status.stdout).toMatch(/auth: Not logged in.*\n\s+hint: log in: run `claude` once/);
    const json = JSON.parse((await troupe(dir, ['status', id, '--json'])).stdout);
    expect(json.stages[0].error).toMatchObject({ kind: 'auth', hint: expect.stringContaining(loginHint) });
    expect(json.hint).toContain(loginHint);
    const runJson = JSON.parse(
      (await troupe(dir, ['run', 'x', '--file', 'p.yaml', '--json'], notLoggedIn)).stdout,
    );
    expect(runJson.hint).toContain(loginHint);
  });

  it('a refused API key fails the stage as auth with a one-line hint in seconds, not after three minutes of retries', async () => {
    const dir = project({ 'p.yaml': claudePipeline });
    const argvFile = join(dir, 'argv.jsonl');
    // the captured 401 run, each retry waited as the real CLI waited it: about three minutes
    const run = await troupe(dir, ['run', 'x', '--file', 'p.yaml', '--json'], {
      TROUPE_CLAUDE_BIN: fake('claude'),
      FAKE_CLI_SCENARIO: 'auth-401',
      FAKE_CLI_RETRY_DELAYS: 'real',
      FAKE_CLI_ARGV_FILE: argvFile,
    });
    expect(run.code).toBe(1);
    const json = JSON.parse(run.stdout);
    expect(json.stages).toHaveLength(1);
    expect(json.stages[0].error).toMatchObject({
      kind: 'auth',
      message: expect.stringContaining("refused claude's credentials (401)"),
      hint: 'ANTHROPIC_API_KEY was refused: set a valid key in it, or unset it and log in with `claude /login`',
    });
    const { pid } = JSON.parse(readFileSync(argvFile, 'utf8').trim()) as { pid: number };
    expect(() => process.kill(pid, 0)).toThrow();
  }, 30_000);

  it('a failed stage lasts from its start to its failure in `run`, `status` and --json', async () => {
    const dir = project({ 'p.yaml': claudePipeline });
    // three lines 400 ms apart: the failure comes after more than a second
    const run = await troupe(dir, ['run', 'x', '--file', 'p.yaml'], {
      ...notLoggedIn,
      FAKE_CLI_DELAY_MS: '400',
    });
    expect(run.stderr).toMatch(/✗ \[1\] writer {2}\d+\.\ds {2}auth: Not logged in/);
    const id = /troupe (T-\S+)/.exec(run.stderr)![1]!;
    expect((await troupe(dir, ['status', id])).stdout).toMatch(/\[1\] writer +failed +\d+\.\ds/);
    const json = JSON.parse((await troupe(dir, ['status', id, '--json'])).stdout);
    expect(json.stages[0].duration_ms).toBeGreaterThanOrEqual(1000);
  });
});

describe('troupe usage counts the tokens read from the cache', () => {
  it('shows them apart from input, totals them, and prices them at the cached rate', async () => {
    // the captured codex run: 1,234 input tokens, 1,000 of them from the cache, 56 output
    const dir = project({ 'p.yaml': 'agents:\n  - id: coder\n    runtime: codex\n    model: gpt-5\n' });
    const run = await troupe(dir, ['run', 'x', '--file', 'p.yaml', '--json'], {
      TROUPE_CODEX_BIN: fake('codex'),
    });
    expect(JSON.parse(run.stdout).usage).toMatchObject({ input_tokens: 234, cache_read_tokens: 1000 });
    const usage = await troupe(dir, ['usage']);
    expect(usage.stdout).toMatch(/^agent +stages +input +cached +output +cost$/m);
    expect(usage.stdout).toMatch(/^coder +1 +234 +1000 +56 +\$0\.0010$/m);
    const json = JSON.parse((await troupe(dir, ['usage', '--json'])).stdout);
    expect(json.total).toMatchObject({ input_tokens: 234, cache_read_tokens: 1000, output_tokens: 56 });
    // gpt-5: $1.25 per million input, $0.125 cached, $10 output
    expect(json.total.cost_usd).toBeCloseTo((234 * 1.25 + 1000 * 0.125 + 56 * 10) / 1e6, 10);
  });
});
