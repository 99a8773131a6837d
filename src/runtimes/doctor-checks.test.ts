import { mkdtempSync } from 'node:fs';
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
});
