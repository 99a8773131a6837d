// What a headless CLI call costs before the model sees a token (issue 14, deliverable 4), with the
// real claude, gemini and codex (test/real-clis/harness.ts installs them) each pointed at its
// loopback mock (test/real-clis/mock-apis):
//   1. one trivial turn as a troupe stage (troupe's own runtime, so troupe's argv): spawn → the
//      mock receives the model request, and spawn → the `result` event; against `node -e 0` and
//      the mock's own round trip measured in the same run;
//   2. the second turn of a conversation: a new process resuming the session, as troupe does for
//      `resume: true` (`claude -p --resume`, `codex exec resume`), against the same turn sent to
//      a process that stayed up (claude `--input-format stream-json`, `codex app-server`), and
//      whether the model request of that turn is the same either way.
// `node bench/cli-startup.js [--quick]` after the build; writes its section of docs/benchmarks.md.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { claudeRuntime } from '../dist/runtimes/claude.js';
import { claudeStreamSessions } from '../dist/runtimes/claude-stream-session.js';
import { codexRuntime } from '../dist/runtimes/codex.js';
import { geminiRuntime } from '../dist/runtimes/gemini.js';
import { MARKER } from '../test/real-clis/mock-apis/common.js';
import { anthropic, gemini, openai, startMock } from '../test/real-clis/mock-apis/index.js';
import { median, tempDir } from './lib.js';

const quick = process.argv.includes('--quick');
const RUNS = quick ? 2 : 5;
const DOC = fileURLToPath(new URL('../docs/benchmarks.md', import.meta.url));
const CLIS_DIR = process.env.TROUPE_REAL_CLIS_DIR ?? join(homedir(), '.cache', 'troupe', 'real-clis');
const bin = (cli) => join(CLIS_DIR, 'node_modules', '.bin', cli);
const log = (line) => process.stderr.write(`${line}\n`);
const version = (pkg) =>
  JSON.parse(readFileSync(join(CLIS_DIR, 'node_modules', pkg, 'package.json'), 'utf8')).version;

/**
 * Each CLI pointed at its mock with a fake key, in a home of its own (the same settings as
 * test/real-clis/e2e.test.ts: see docs/runtimes.md).
 */
const CLIS = {
  claude: {
    pkg: '@anthropic-ai/claude-code',
    vendor: anthropic,
    runtime: (env) => claudeRuntime({ bin: bin('claude'), env }),
    env: (mock, home) => ({
      HOME: home,
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: 'sk-ant-fake-bench',
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    }),
  },
  gemini: {
    pkg: '@google/gemini-cli',
    vendor: gemini,
    runtime: (env) => geminiRuntime({ bin: bin('gemini'), env, settingsDir: tempDir('gemini-settings') }),
    env: (mock, home) => {
      mkdirSync(join(home, '.gemini'), { recursive: true });
      writeFileSync(
        join(home, '.gemini', 'settings.json'),
        JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }),
      );
      return { HOME: home, GOOGLE_GEMINI_BASE_URL: mock.url, GEMINI_API_KEY: 'fake-gemini-key-bench' };
    },
  },
  codex: {
    pkg: '@openai/codex',
    vendor: openai,
    model: 'gpt-5.5',
    runtime: (env) => codexRuntime({ bin: bin('codex'), env }),
    env: (mock, home) => {
      mkdirSync(join(home, '.codex'), { recursive: true });
      writeFileSync(
        join(home, '.codex', 'config.toml'),
        `model_provider = "mock"\n[model_providers.mock]\nname = "mock"\nbase_url = "${mock.url}/v1"\nenv_key = "CODEX_API_KEY"\nwire_api = "responses"\nsupports_websockets = false\n`,
      );
      return { HOME: home, CODEX_HOME: join(home, '.codex'), CODEX_API_KEY: 'sk-fake-codex-bench' };
    },
  },
};

/** The caller's environment without any credential or setting that could reach a CLI. */
const CLEAN = Object.fromEntries(
  Object.entries(process.env).filter(
    ([k]) => !/^(ANTHROPIC_|CLAUDE_|OPENAI_|CODEX_|GEMINI_|GOOGLE_)/.test(k) && k !== 'HOME',
  ),
);

function request(cwd, prompt, overrides = {}) {
  return {
    agentId: 'bench',
    purpose: 'stage',
    prompt,
    systemPrompt: '',
    model: null,
    effort: null,
    cwd,
    mcp: [],
    extraFlags: [],
    timeoutMs: 120_000,
    signal: new AbortController().signal,
    resumeSessionId: null,
    previousMeta: [],
    permissions: 'edit',
    ...overrides,
  };
}

/** A git repository to work in (codex wants one). */
function repo() {
  const dir = tempDir('cli-startup-repo');
  execFileSync('git', ['init', '-q', dir]);
  return dir;
}

/**
 * The mock's model requests of `script` (side calls carry no marker), and the turns every run
 * uses: `one` answers the first turn, `two` the second.
 */
const SCRIPT = { one: [{ text: 'first answer' }], two: [{ text: 'second answer' }] };
const modelRequests = (mock, from, name) => mock.requests.slice(from).filter((r) => r.script === name);

/** One troupe stage: ms from its start to the model request, to the result; and the session. */
async function stage(runtime, req, mock, name) {
  const from = mock.requests.length;
  const started = Date.now();
  let result = null;
  let session = null;
  for await (const event of runtime.run(req)) {
    if (event.type === 'session') session = event.id;
    if (event.type === 'result') result = event;
  }
  const ended = Date.now();
  const [first] = modelRequests(mock, from, name);
  if (!result || !first) throw new Error(`no result or no request for ${name}`);
  return { requestMs: first.at - started, resultMs: ended - started, session, text: result.text, first };
}

/** `node -e 0`, spawned and waited for the same way (async, pipes). */
function nodeBaseline() {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['-e', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.on('error', reject);
    child.on('exit', () => resolve(Date.now() - started));
  });
}

/** One model turn fetched straight from the mock (what the mock itself costs). */
async function mockRoundTrip(mock) {
  const started = Date.now();
  const res = await fetch(`${mock.url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'm',
      stream: true,
      tools: [{ name: 't' }],
      messages: [{ role: 'user', content: '[[script:one]] hi' }],
    }),
  });
  await res.text();
  return Date.now() - started;
}

async function oneTurn(name, cli) {
  const mock = await startMock(cli.vendor, SCRIPT);
  try {
    const env = { ...CLEAN, ...cli.env(mock, tempDir(`${name}-home`)) };
    const runtime = cli.runtime(env);
    const cwd = repo();
    const req = () => request(cwd, '[[script:one]] say hi', cli.model ? { model: cli.model } : {});
    await stage(runtime, req(), mock, 'one'); // warm-up: the disk cache, the CLI's first-run files
    const runs = [];
    const baseline = [];
    const roundTrip = [];
    for (let i = 0; i < RUNS; i++) {
      baseline.push(await nodeBaseline());
      roundTrip.push(await mockRoundTrip(mock));
      runs.push(await stage(runtime, req(), mock, 'one'));
    }
    return {
      requestMs: median(runs.map((r) => r.requestMs)),
      resultMs: median(runs.map((r) => r.resultMs)),
      nodeMs: median(baseline),
      mockMs: median(roundTrip),
    };
  } finally {
    await mock.close();
  }
}

/** What the model is sent, without what differs between any two calls (ids, dates). */
function normalized(recorded) {
  const body = recorded.body;
  return JSON.stringify({ messages: recorded.messages, tools: toolNames(body), model: body?.model ?? null });
}
function toolNames(body) {
  const tools = body?.tools ?? [];
  return tools.map((t) => t.name ?? t.type ?? '').sort();
}

/** JSON lines of a child's stdout, each handed to `on`. */
function lines(child, on) {
  createInterface({ input: child.stdout }).on('line', (line) => {
    let value;
    try {
      value = JSON.parse(line);
    } catch {
      return;
    }
    on(value);
  });
}

/**
 * Claude kept up, as troupe now runs a `resume: true` agent (src/runtimes/claude-stream-session.ts):
 * `claude -p --input-format stream-json`, troupe's other flags unchanged, a turn a stage.
 */
function claudeKeptUp(env, cwd, mock) {
  const runtime = CLIS.claude.runtime(env);
  let session = null;
  return {
    async turn(prompt) {
      const name = MARKER.exec(prompt)[1];
      const done = await stage(
        runtime,
        request(cwd, prompt, { keepSession: true, resumeSessionId: session }),
        mock,
        name,
      );
      session = done.session;
      return { ms: done.resultMs };
    },
    close: () => claudeStreamSessions.closeAll(),
  };
}

/** Codex kept up: `codex app-server` (JSON-RPC lines on stdio), one thread, a `turn/start` a turn. */
async function codexAppServer(env, cwd, _mock, model) {
  const child = spawn(bin('codex'), ['app-server'], {
    cwd,
    env: { ...env, TZ: 'UTC' },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  let next = 1;
  const pending = new Map();
  const completed = [];
  lines(child, (msg) => {
    if (msg.id !== undefined && pending.has(msg.id)) {
      const { resolve, reject } = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) reject(new Error(`codex app-server: ${JSON.stringify(msg.error)}`));
      else resolve(msg.result);
    } else if (msg.method === 'turn/completed') completed.shift()?.(msg.params);
  });
  const call = (method, params) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  await call('initialize', {
    clientInfo: { name: 'troupe-bench', title: null, version: '0' },
    capabilities: null,
  });
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'initialized' })}\n`);
  const { thread } = await call('thread/start', {
    cwd,
    model,
    sandbox: 'workspace-write',
    approvalPolicy: 'never',
  });
  return {
    async turn(prompt) {
      const started = Date.now();
      const done = new Promise((resolve) => completed.push(resolve));
      await call('turn/start', {
        threadId: thread.id,
        input: [{ type: 'text', text: prompt, text_elements: [] }],
      });
      await done;
      return { ms: Date.now() - started };
    },
    close: () =>
      new Promise((resolve) => {
        child.on('exit', resolve);
        child.stdin.end();
        setTimeout(() => child.kill(), 5000).unref();
      }),
  };
}

const KEPT_UP = { claude: claudeKeptUp, codex: codexAppServer };

/**
 * The second turn two ways, alternating: a new process resuming the first turn's session (as a
 * troupe stage with `resume: true`), and a process that stayed up; plus whether the model
 * request of the second turn is the same.
 */
async function secondTurn(name, cli) {
  const mock = await startMock(cli.vendor, SCRIPT);
  try {
    const env = { ...CLEAN, ...cli.env(mock, tempDir(`${name}-home2`)) };
    const runtime = cli.runtime(env);
    const cwd = repo();
    const model = cli.model ? { model: cli.model } : {};
    const resumed = [];
    const kept = [];
    const firstTurnKept = [];
    let same = true;
    for (let i = 0; i <= RUNS; i++) {
      // a fresh process resuming
      const one = await stage(runtime, request(cwd, '[[script:one]] say hi', model), mock, 'one');
      const from = mock.requests.length;
      const two = await stage(
        runtime,
        request(cwd, '[[script:two]] and again', { ...model, resumeSessionId: one.session }),
        mock,
        'two',
      );
      const viaResume = normalized(two.first);
      // one process for both turns
      const began = Date.now();
      const session = await KEPT_UP[name](env, cwd, mock, cli.model ?? null);
      await session.turn('[[script:one]] say hi');
      const t1 = { ms: Date.now() - began }; // with the process's start (codex: initialize, thread/start)
      const before = mock.requests.length;
      const t2 = await session.turn('[[script:two]] and again');
      await session.close();
      const [keptRequest] = modelRequests(mock, before, 'two');
      if (i === 0) continue; // warm-up
      if (normalized(keptRequest) !== viaResume) {
        same = false;
        if (process.env.TROUPE_BENCH_DIFF) log(`resume:  ${viaResume}\nkept up: ${normalized(keptRequest)}`);
      }
      if (modelRequests(mock, from, 'two').length === 0) throw new Error('no resumed request');
      resumed.push(two.resultMs);
      kept.push(t2.ms);
      firstTurnKept.push(t1.ms);
    }
    return {
      resumedMs: median(resumed),
      keptMs: median(kept),
      firstKeptMs: median(firstTurnKept),
      same,
    };
  } finally {
    await mock.close();
  }
}

const one = {};
const two = {};
const only = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',');
for (const [name, cli] of Object.entries(CLIS)) {
  if (only && !only.includes(name)) continue;
  if (!existsSync(bin(name))) {
    log(`${name}: not installed in ${CLIS_DIR} (npm run test:real-clis installs it), skipped`);
    continue;
  }
  log(`${name} ${version(cli.pkg)}: one turn, ${RUNS} runs`);
  one[name] = await oneTurn(name, cli);
  log(`  ${JSON.stringify(one[name])}`);
  if (KEPT_UP[name]) {
    log(`${name}: the second turn, resumed vs kept up, ${RUNS} runs`);
    two[name] = await secondTurn(name, cli);
    log(`  ${JSON.stringify(two[name])}`);
  }
}

const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
const x = (r) => `${r.toFixed(r >= 10 ? 0 : 1)}×`;
const pct = (saved, of) => `${Math.round((100 * saved) / of)}%`;
const section = `<!-- cli-startup:start -->
## Start-up cost of the real CLIs

Measured by \`node bench/cli-startup.js${quick ? ' --quick' : ''}\` (after \`npm run build\`; the CLIs in
\`~/.cache/troupe/real-clis\`, see docs/runtimes.md) on ${new Date().toISOString().slice(0, 10)}, Node ${process.version}:
each real CLI${
  Object.keys(one).length
    ? ` (${Object.keys(one)
        .map((n) => `${n} ${version(CLIS[n].pkg)}`)
        .join(', ')})`
    : ''
} against its loopback mock,
with a fake key; ${RUNS} runs after a warm-up, medians. Ratios are against baselines of the same run:
\`node -e 0\` spawned the same way, and one model turn fetched straight from the mock.

**One trivial turn as a troupe stage** (troupe's runtime, so troupe's own argv):

| CLI | spawn → model request | spawn → result | \`node -e 0\` | mock round trip | result ÷ \`node -e 0\` |
| --- | --- | --- | --- | --- | --- |
${Object.entries(one)
  .map(
    ([n, r]) =>
      `| ${n} | ${s(r.requestMs)} | ${s(r.resultMs)} | ${r.nodeMs} ms | ${r.mockMs} ms | ${x(r.resultMs / r.nodeMs)} |`,
  )
  .join('\n')}

**The second turn of a conversation**, before and after: a new process resuming the session
(\`claude -p --resume\`, \`codex exec resume\`: what \`resume: true\` did before) against the same turn sent to
the process that served the first one (claude: troupe's runtime as it now runs a \`resume: true\` stage,
\`-p --input-format stream-json\` kept up by src/runtimes/claude-stream-session.ts; codex: \`codex app-server\`,
\`turn/start\` on one thread, measured only); "same request": the model request of the second turn
(messages, tool names, model) is identical either way. "Kept up, its first turn" counts from the
process's spawn (codex: with \`initialize\` and \`thread/start\`): what the first stage of such an agent costs.

| CLI | resumed (new process) | kept up | saved a turn | kept up, its first turn | same request |
| --- | --- | --- | --- | --- | --- |
${Object.entries(two)
  .map(
    ([n, r]) =>
      `| ${n} | ${s(r.resumedMs)} | ${s(r.keptMs)} | ${pct(r.resumedMs - r.keptMs, r.resumedMs)} | ${s(r.firstKeptMs)} | ${r.same ? 'yes' : '**no**'} |`,
  )
  .join('\n')}
<!-- cli-startup:end -->`;

const previous = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '';
const re = /<!-- cli-startup:start -->[\s\S]*?<!-- cli-startup:end -->/;
writeFileSync(
  DOC,
  re.test(previous) ? previous.replace(re, section) : `${previous.trimEnd()}\n\n${section}\n`,
);
console.log(section);
