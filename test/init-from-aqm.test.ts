import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project, repoRoot, troupe } from './support/troupe.js';

/**
 * `troupe init --from-aqm` on copies of aqm's example projects (test/fixtures/aqm-projects,
 * reconstructed from aqm's documents: see its README).
 */

function copyOf(name: string): string {
  const dir = project();
  cpSync(join(repoRoot, 'test', 'fixtures', 'aqm-projects', name), dir, { recursive: true });
  return dir;
}

/** Every file under `dir`, with its content. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      else out[relative(dir, p)] = readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}

interface Report {
  written: Array<{ file: string; what: string }>;
  changed: string[];
  skipped: Array<{ what: string; reason: string }>;
  differences: string[];
  next: string;
}

async function convert(dir: string, args: string[] = []) {
  const run = await troupe(dir, ['init', '--from-aqm', '--json', ...args]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Report;
}

const read = (dir: string, file: string) => readFileSync(join(dir, file), 'utf8');

describe('troupe init --from-aqm', () => {
  it("aqm's own project: its dev pipeline and config, .aqm/ untouched", async () => {
    const dir = copyOf('aqm-self');
    const before = snapshot(join(dir, '.aqm'));
    const report = await convert(dir);
    expect(report.written).toEqual([
      { file: '.troupe/pipelines/dev.yaml', what: 'from .aqm/pipelines/dev.yaml' },
      { file: '.troupe/config.yaml', what: 'from .aqm/config.yaml' },
      { file: '.troupe/.gitignore', what: "keeps troupe's state out of git" },
    ]);
    expect(read(dir, '.troupe/pipelines/dev.yaml')).toBe(read(dir, '.aqm/pipelines/dev.yaml'));
    expect(read(dir, '.troupe/config.yaml')).toBe(
      '# carried over from .aqm/ by `troupe init --from-aqm`\ndefault_pipeline: dev\npipeline:\n  max_stages: 30\ngate:\n  timeout: 180\ntimeouts:\n  claude: 900\n',
    );
    expect(report.skipped).toEqual([
      { what: '.aqm/tasks', reason: expect.stringContaining("aqm's task queue") },
    ]);
    expect(report.differences).toEqual([]);
    expect(snapshot(join(dir, '.aqm'))).toEqual(before);
    // troupe now uses the copies
    const list = JSON.parse((await troupe(dir, ['pipeline', 'list', '--json'])).stdout);
    expect(list.find((p: { isDefault: boolean }) => p.isDefault).file).toBe(
      join(dir, '.troupe/pipelines/dev.yaml'),
    );
    const validate = JSON.parse((await troupe(dir, ['validate', '--json'])).stdout);
    expect(validate).toMatchObject({ valid: true, summary: { agent_count: 7 } });
  });

  it('what aqm init writes: the default pipeline, as it is', async () => {
    const dir = copyOf('aqm-init');
    const report = await convert(dir);
    expect(report.written.map((w) => w.file)).toEqual([
      '.troupe/pipelines/default.yaml',
      '.troupe/config.yaml',
      '.troupe/.gitignore',
    ]);
    expect(read(dir, '.troupe/pipelines/default.yaml')).toBe(read(dir, '.aqm/pipelines/default.yaml'));
    expect(report.changed).toEqual([]);
    expect(report.skipped).toEqual([]);
    const agents = await troupe(dir, ['agents']);
    expect(agents.stdout).toContain(`default (${join(dir, '.troupe/pipelines/default.yaml')})`);
  });

  it('an older project: legacy agents.yaml, params, a deprecated key, a setting aqm ignored, a pipeline troupe cannot use', async () => {
    const dir = copyOf('aqm-legacy');
    const before = snapshot(join(dir, '.aqm'));
    const report = await convert(dir);
    expect(report.written.map((w) => [w.file, w.what])).toEqual([
      ['.troupe/pipelines/default.yaml', 'from .aqm/agents.yaml'],
      ['.troupe/params.yaml', 'from .aqm/params.yaml'],
      ['.troupe/config.yaml', 'from .aqm/config.yaml'],
      ['.troupe/.gitignore', "keeps troupe's state out of git"],
    ]);
    expect(report.changed).toEqual([
      ".troupe/pipelines/default.yaml:10:5: claude_code_flags → cli_flags (aqm's deprecated name)",
    ]);
    expect(read(dir, '.troupe/pipelines/default.yaml')).toBe(
      read(dir, '.aqm/agents.yaml').replace('claude_code_flags:', 'cli_flags:'),
    );
    expect(report.skipped).toEqual([
      {
        what: '.aqm/pipelines/software-feature.yaml',
        reason: expect.stringMatching(
          /^troupe cannot use it: \.aqm\/pipelines\/software-feature\.yaml:6:14: error: .*not "claude_code" \(and 2 more\)$/,
        ),
      },
      { what: '.aqm/config.yaml: `web.port`', reason: expect.stringContaining('aqm ignored it') },
    ]);
    expect(existsSync(join(dir, '.troupe/pipelines/software-feature.yaml'))).toBe(false);
    expect(report.differences).toEqual([
      expect.stringMatching(
        /^\.troupe\/pipelines\/default\.yaml:14:5: `editor` hands off on `verdict == publish`: aqm looked/,
      ),
      expect.stringMatching(
        /`editor`'s gate has no on_reject handoff: aqm completed the task on a rejection/,
      ),
    ]);
    // the copy, not .aqm/agents.yaml (which troupe would otherwise take first), is the default
    expect(read(dir, '.troupe/config.yaml')).toContain('default_pipeline: default\n');
    expect(read(dir, '.troupe/config.yaml')).toContain(
      'gate:\n  model: claude-sonnet-4-20250514\n  timeout: 120\n',
    );
    const validate = await troupe(dir, ['validate']);
    expect(validate.stdout).toMatch(/^✓ valid: 3 agents .*1 param/m);
    expect(validate.stdout).not.toContain('claude_code_flags');
    expect(snapshot(join(dir, '.aqm'))).toEqual(before);
  });

  it('says it in words without --json', async () => {
    const dir = copyOf('aqm-legacy');
    const run = await troupe(dir, ['init', '--from-aqm']);
    expect(run.stdout).toContain(
      'converted .aqm/ into .troupe/ (.aqm/ is left as it was):\n  wrote .troupe/pipelines/default.yaml  (from .aqm/agents.yaml)\n',
    );
    expect(run.stdout).toMatch(
      /^not carried over:\n {2}\.aqm\/pipelines\/software-feature\.yaml: troupe cannot use it/m,
    );
    expect(run.stdout).toMatch(/^next: troupe validate && troupe run "your task"$/m);
  });

  it('a plain troupe init in an aqm project points to --from-aqm', async () => {
    const init = await troupe(copyOf('aqm-init'), ['init', '--runtime', 'claude']);
    expect(init.stdout).toContain(
      'note: this folder has an aqm project: `troupe init --from-aqm` converts its .aqm/',
    );
  });

  it('writes nothing over an existing .troupe/ file without --force; no .aqm/ is exit 3', async () => {
    const dir = copyOf('aqm-self');
    await convert(dir);
    const again = await troupe(dir, ['init', '--from-aqm']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      /^troupe: already in \.troupe\/: \.troupe\/pipelines\/dev\.yaml, \.troupe\/config\.yaml; nothing was written\n {2}hint: pass --force/,
    );
    expect((await troupe(dir, ['init', '--from-aqm', '--force'])).code).toBe(0);
    const mixed = await troupe(dir, ['init', '--from-aqm', '--runtimes', 'claude']);
    expect([mixed.code, mixed.stderr.split('\n')[0]]).toEqual([
      2,
      'troupe: --from-aqm converts what .aqm/ has: it takes only --force and --json',
    ]);
    const none = await troupe(project(), ['init', '--from-aqm']);
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/^troupe: no \.aqm\/ in /);
  });
});
