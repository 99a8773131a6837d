import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project, repoRoot, troupe } from './support/troupe.js';

/** `troupe validate WORKFLOW.md` and `troupe init --from-symphony` through the built CLI. */

const REAL = readFileSync(join(repoRoot, 'test', 'fixtures', 'symphony', 'elixir-WORKFLOW.md'), 'utf8');

describe("Symphony's WORKFLOW.md on the command line", () => {
  it('validate: exit 2 and one located line for an unknown variable of the prompt', async () => {
    const dir = project({ 'WORKFLOW.md': REAL.replace('{{ issue.url }}', '{{ issue.link }}') });
    const run = await troupe(dir, ['validate', 'WORKFLOW.md']);
    expect(run.code).toBe(2);
    const errors = run.stdout.split('\n').filter((l) => / error: /.test(l));
    expect(errors).toEqual([
      'WORKFLOW.md:70:9: error: template_render_error: undefined variable: issue.link',
    ]);
    expect(run.stderr).toBe('');
  });

  it('init --from-symphony converts it, and the pipeline it writes validates', async () => {
    const dir = project({ 'WORKFLOW.md': REAL });
    const run = await troupe(dir, ['init', '--from-symphony', '--json']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.written.map((w: { file: string }) => w.file)).toEqual([
      '.troupe/pipelines/default.yaml',
      '.troupe/trackers/default.md',
      '.troupe/.gitignore',
    ]);
    expect(report.mapping.filter((m: { kind: string }) => m.kind === 'unsupported').length).toBeGreaterThan(
      0,
    );
    const validate = await troupe(dir, ['validate', '--json']);
    expect(JSON.parse(validate.stdout)).toMatchObject({ valid: true });
    const tracker = await troupe(dir, ['validate', '.troupe/trackers/default.md']);
    expect(tracker.code).toBe(0);
  });

  it('a bad front matter is one line and exit 2 for init too', async () => {
    const dir = project({ 'WORKFLOW.md': '---\njust text\n---\nhi\n' });
    const run = await troupe(dir, ['init', '--from-symphony']);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')[0]).toBe(
      'troupe: WORKFLOW.md:2:1: workflow_front_matter_not_a_map: the front matter is a string, not a map of settings',
    );
  });
});
