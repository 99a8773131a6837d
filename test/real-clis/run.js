// `npm run test:real-clis`: installs the real claude, gemini and codex CLIs into a temp folder
// and checks, against those binaries, that every flag troupe passes is accepted and that a run
// without credentials ends classified (auth or network) within 60 s with a clear message.
// Not part of `npm test` (it downloads the CLIs). TROUPE_REAL_CLIS_DIR reuses an install.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { claudeRuntime } from '../../dist/runtimes/claude.js';
import { codexRuntime } from '../../dist/runtimes/codex.js';
import { geminiRuntime } from '../../dist/runtimes/gemini.js';
import { RuntimeError } from '../../dist/runtimes/runtime.js';

const PACKAGES = ['@anthropic-ai/claude-code', '@google/gemini-cli', '@openai/codex'];
const LIMIT_MS = 60_000;

let prefix = process.env.TROUPE_REAL_CLIS_DIR;
if (!prefix) {
  prefix = mkdtempSync(path.join(tmpdir(), 'troupe-real-clis-'));
  process.stderr.write(`installing ${PACKAGES.join(', ')} into ${prefix}…\n`);
  execFileSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', ...PACKAGES], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}
const bin = (name) => path.join(prefix, 'node_modules', '.bin', name);

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
process.exitCode = failed ? 1 : 0;
