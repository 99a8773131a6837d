import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPipelineText } from '../pipeline/load.js';
import { fakeCli } from './contract.js';
import { runDoctor } from './doctor-checks.js';

const home = mkdtempSync(path.join(os.tmpdir(), 'troupe-doctor-'));
const bins = { claude: fakeCli('claude'), gemini: fakeCli('gemini'), codex: '/nonexistent/codex' };
const env = { PATH: process.env.PATH, FAKE_CLI_SCENARIO: 'not-logged-in' };

describe('troupe doctor checks', () => {
  it('reports versions, what is not installed and what cannot run headless, with the fix', async () => {
    const pipeline = loadPipelineText(
      'agents:\n  - id: a\n    runtime: claude\n    mcp: [{ server: db, command: no-such-mcp-server }]\n  - id: b\n    runtime: openai\n    model: m\n',
      'p.yaml',
    );
    const report = await runDoctor({ cwd: home, home, env, bins, pipeline });
    const byName = Object.fromEntries(report.clis.map((c) => [c.runtime, c]));
    expect(byName.claude).toMatchObject({
      installed: true,
      version: '2.1.197 (Claude Code)',
      status: 'auth',
      used: true,
    });
    expect(byName.gemini).toMatchObject({ installed: true, version: '0.61.0', status: 'auth', used: false });
    expect(byName.codex).toMatchObject({
      installed: false,
      status: 'missing_cli',
      fix: 'npm i -g @openai/codex',
    });
    expect(report.mcp).toEqual([
      expect.objectContaining({ server: 'db', command: 'no-such-mcp-server', found: false }),
    ]);
    expect(report.keys).toEqual([expect.objectContaining({ variable: 'OPENAI_API_KEY', set: false })]);
    expect(report.ok).toBe(false);
  });

  it('is ready with credentials in the environment, and flags an untrusted folder only when trust is off', async () => {
    const withKeys = { ...env, ANTHROPIC_API_KEY: 'k', GEMINI_API_KEY: 'k' };
    const trusting = await runDoctor({ cwd: home, home, env: withKeys, bins });
    expect(trusting.clis.filter((c) => c.status === 'ok').map((c) => c.runtime)).toEqual([
      'claude',
      'gemini',
    ]);
    const strict = await runDoctor({ cwd: home, home, env: withKeys, bins, trustWorkspace: false });
    expect(strict.clis.find((c) => c.runtime === 'gemini')?.status).toBe('untrusted_directory');
    expect(strict.ok).toBe(true);
  });

  it('reports a probe that does not answer in time as timed out, with the time, not as not installed', async () => {
    const report = await runDoctor({
      cwd: home,
      home,
      env: { ...env, FAKE_CLI_VERSION_DELAY_MS: '5000' },
      bins,
      probeTimeoutMs: 300,
    });
    const gemini = report.clis.find((c) => c.runtime === 'gemini');
    expect(gemini).toMatchObject({
      status: 'timed_out',
      detail: expect.stringMatching(/did not answer in 0\.\d s/),
    });
    expect(gemini?.fix).not.toContain('npm i');
  });

  it('says whether a pipeline was checked', async () => {
    expect((await runDoctor({ cwd: home, home, env, bins })).pipeline).toBe(false);
  });

  const agents = (yaml: string) => loadPipelineText(`agents:\n${yaml}`, 'p.yaml');
  const warningsOf = async (
    yaml: string,
    more: { env?: NodeJS.ProcessEnv; uid?: number; home?: string } = {},
  ) => (await runDoctor({ cwd: home, home, env, bins, pipeline: agents(yaml), uid: 1000, ...more })).warnings;

  it('warns as root that permissions: full on claude needs IS_SANDBOX=1, and blocks on it', async () => {
    const yaml = '  - id: dev\n    runtime: claude\n    permissions: full\n';
    const asRoot = await runDoctor({ cwd: home, home, env, bins, pipeline: agents(yaml), uid: 0 });
    expect(asRoot.warnings).toEqual([
      expect.objectContaining({ agent: 'dev', blocking: true, message: expect.stringContaining('as root') }),
    ]);
    expect(asRoot.ok).toBe(false);
    expect(await warningsOf(yaml, { uid: 0, env: { ...env, IS_SANDBOX: '1' } })).toEqual([]);
    expect(await warningsOf(yaml, { uid: 1000 })).toEqual([]);
  });

  it('warns when cli_flags take MCP tools away from a gemini or claude agent', async () => {
    const mcp = '    mcp: [{ server: db, command: /bin/true }, { server: fs, command: /bin/true }]\n';
    expect(await warningsOf(`  - id: g\n    runtime: gemini\n${mcp}`)).toEqual([]);
    expect(
      (
        await warningsOf(
          `  - id: g\n    runtime: gemini\n${mcp}    cli_flags: [--allowed-mcp-server-names, db, --approval-mode, plan]\n`,
        )
      ).map((w) => w.message),
    ).toEqual([expect.stringContaining('will not load MCP server fs'), expect.stringContaining('plan mode')]);
    expect(
      await warningsOf(`  - id: c\n    runtime: claude\n${mcp}    cli_flags: [--permission-mode, plan]\n`),
    ).toEqual([expect.objectContaining({ message: expect.stringContaining('plan mode') })]);
  });

  it('warns when gemini settings cannot be honoured: a user file it cannot read, a system file it skips, effort without a model', async () => {
    const user = mkdtempSync(path.join(os.tmpdir(), 'troupe-doctor-user-'));
    mkdirSync(path.join(user, '.gemini'));
    writeFileSync(path.join(user, '.gemini', 'settings.json'), '{ "security": ');
    const systemDir = mkdtempSync(path.join(os.tmpdir(), 'troupe-doctor-system-'));
    chmodSync(systemDir, 0o777);
    writeFileSync(path.join(systemDir, 'settings.json'), '{}');
    const warnings = await warningsOf('  - id: g\n    runtime: gemini\n    effort: high\n', {
      env: {
        ...env,
        GEMINI_CLI_HOME: user,
        GEMINI_CLI_SYSTEM_SETTINGS_PATH: path.join(systemDir, 'settings.json'),
      },
    });
    expect(warnings.map((w) => [w.message, w.blocking])).toEqual([
      [expect.stringContaining('needs a `model`'), false],
      [expect.stringContaining('is not valid JSON'), true],
      [
        expect.stringMatching(
          /^gemini skips .*settings\.json: .*(not owned by root|writable by group or others)/,
        ),
        false,
      ],
    ]);
  });

  it("warns that effort is not sent to an endpoint other than OpenAI's reasoning models, and checks the key OpenAI's API gets", async () => {
    const report = await runDoctor({
      cwd: home,
      home,
      env,
      bins,
      pipeline: agents(
        '  - id: local\n    runtime: openai\n    model: llama3.2\n    effort: high\n    openai: { base_url: "http://localhost:11434/v1" }\n  - id: o\n    runtime: openai\n    model: o4-mini\n    effort: high\n    openai: { base_url: "https://api.openai.com/v1" }\n',
      ),
    });
    expect(report.warnings).toEqual([
      expect.objectContaining({ agent: 'local', message: expect.stringContaining('effort is not sent') }),
    ]);
    expect(report.keys).toEqual([
      expect.objectContaining({ agent: 'o', variable: 'OPENAI_API_KEY', set: false }),
    ]);
  });

  it('does not count OPENAI_API_KEY as codex credentials: codex exec sends CODEX_API_KEY only', async () => {
    const codex = { ...bins, codex: fakeCli('codex') };
    const withOpenAi = await runDoctor({
      cwd: home,
      home,
      env: { ...env, OPENAI_API_KEY: 'k' },
      bins: codex,
    });
    expect(withOpenAi.clis.find((c) => c.runtime === 'codex')).toMatchObject({
      status: 'auth',
      fix: expect.stringContaining('CODEX_API_KEY'),
    });
    const withCodex = await runDoctor({ cwd: home, home, env: { ...env, CODEX_API_KEY: 'k' }, bins: codex });
    expect(withCodex.clis.find((c) => c.runtime === 'codex')?.status).toBe('ok');
  });
});
