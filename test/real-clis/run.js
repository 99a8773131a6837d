// `npm run test:real-clis`: the real claude, gemini and codex CLIs, installed (once) into a
// cache folder, ~/.cache/troupe/real-clis or TROUPE_REAL_CLIS_DIR, at the versions the mocks
// were written against. First: every flag troupe passes is accepted, and a run without
// credentials ends classified (auth or network) within 60 s with a clear message. Then every
// scenario of e2e.test.ts: each CLI through `troupe run` against a loopback mock of its
// vendor's API (mock-apis/), as root and as a non-root user. `npm test` runs a quick part of
// e2e.test.ts when the cache folder has the CLIs.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RuntimeError } from '../../dist/core/runtime.js';
import { claudeRuntime } from '../../dist/runtimes/claude.js';
import { codexRuntime } from '../../dist/runtimes/codex.js';
import { geminiRuntime } from '../../dist/runtimes/gemini.js';

const PACKAGES = ['@anthropic-ai/claude-code@2.1.197', '@google/gemini-cli@0.61.0', '@openai/codex@0.171.0'];
const LIMIT_MS = 60_000;

const prefix = process.env.TROUPE_REAL_CLIS_DIR ?? path.join(homedir(), '.cache', 'troupe', 'real-clis');
const bin = (name) => path.join(prefix, 'node_modules', '.bin', name);
if (!['claude', 'gemini', 'codex'].every((name) => existsSync(bin(name)))) {
  process.stderr.write(`installing ${PACKAGES.join(', ')} into ${prefix}…\n`);
  execFileSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', ...PACKAGES], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

// a scratch home (no login anywhere) and a git repository to work in
const home = mkdtempSync(path.join(tmpdir(), 'troupe-real-home-'));
const repo = mkdtempSync(path.join(tmpdir(), 'troupe-real-repo-'));
execFileSync('git', ['init', '-q', repo]);
const env = {
  HOME: home,
  CODEX_HOME: undefined,
  ANTHROPIC_API_KEY: undefined,
  CLAUDE_CODE_OAUTH_TOKEN: undefined,
  OPENAI_API_KEY: undefined,
  CODEX_API_KEY: undefined,
  GEMINI_API_KEY: undefined,
  GOOGLE_API_KEY: undefined,
  GOOGLE_GENAI_USE_VERTEXAI: undefined,
  GOOGLE_GENAI_USE_GCA: undefined,
};

const request = (overrides) => ({
  agentId: 'probe',
  purpose: 'stage',
  prompt: '-say hi (a prompt that starts with a dash)',
  systemPrompt: '',
  model: null,
  effort: 'high',
  cwd: repo,
  mcp: [{ server: 'probe', command: 'true', args: ['--x'], env: { K: 'v' } }],
  extraFlags: [],
  timeoutMs: LIMIT_MS,
  signal: new AbortController().signal,
  resumeSessionId: null,
  previousMeta: [],
  permissions: 'edit',
  ...overrides,
});

const cases = [
  ['claude', claudeRuntime({ bin: bin('claude'), env }), { model: 'sonnet' }, ['auth', 'network']],
  [
    'claude (gate, read_only)',
    claudeRuntime({ bin: bin('claude'), env }),
    { purpose: 'gate', systemPrompt: 'judge', permissions: 'read_only' },
    ['auth', 'network'],
  ],
  [
    'claude (resume)',
    claudeRuntime({ bin: bin('claude'), env }),
    { resumeSessionId: '00000000-0000-4000-8000-000000000000' },
    ['auth', 'network', 'session_not_found'],
  ],
  ['gemini', geminiRuntime({ bin: bin('gemini'), env }), { model: 'gemini-2.5-flash' }, ['auth', 'network']],
  [
    'gemini (no trust)',
    geminiRuntime({ bin: bin('gemini'), env, trustWorkspace: false }),
    { model: 'gemini-2.5-flash' },
    ['auth', 'network', 'untrusted_directory'],
  ],
  [
    'codex',
    codexRuntime({ bin: bin('codex'), env: { ...env, CODEX_HOME: path.join(home, '.codex') } }),
    { model: 'gpt-5.5' },
    ['auth', 'network'],
  ],
  [
    'codex (resume)',
    codexRuntime({ bin: bin('codex'), env }),
    { resumeSessionId: '00000000-0000-4000-8000-000000000000' },
    ['auth', 'network', 'session_not_found'],
  ],
  [
    'codex (outside git)',
    codexRuntime({ bin: bin('codex'), env }),
    { cwd: home, permissions: 'read_only' },
    ['auth', 'network'],
  ],
];
execFileSync('mkdir', ['-p', path.join(home, '.codex')]);

let failed = 0;
for (const [name, runtime, overrides, expected] of cases) {
  const started = Date.now();
  let outcome;
  try {
    for await (const _ of runtime.run(request(overrides))) {
      // a run without credentials must not produce a result
    }
    outcome = { kind: 'result', message: 'ended with a result without credentials' };
  } catch (error) {
    outcome = error instanceof RuntimeError ? error : { kind: 'thrown', message: String(error) };
  }
  const seconds = (Date.now() - started) / 1000;
  const ok =
    expected.includes(outcome.kind) && seconds < LIMIT_MS / 1000 && outcome.message.trim().length > 0;
  if (!ok) failed++;
  process.stdout.write(
    `${ok ? '✓' : '✗'} ${name}: ${outcome.kind} in ${seconds.toFixed(1)}s — ${outcome.message.split('\n')[0].slice(0, 160)}\n`,
  );
}
process.stdout.write(failed ? `✗ ${failed} of ${cases.length} failed\n` : `✓ all ${cases.length} passed\n`);

// every end-to-end scenario, against the mocks
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const e2e = spawnSync(
  path.join(root, 'node_modules', '.bin', 'vitest'),
  ['run', 'test/real-clis/e2e.test.ts'],
  {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, TROUPE_REAL_CLIS_DIR: prefix, TROUPE_REAL_CLIS_FULL: '1' },
  },
);
process.exitCode = failed || e2e.status !== 0 ? 1 : 0;
