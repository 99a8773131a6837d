import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project, repoRoot, troupe } from './support/troupe.js';

const examples = readdirSync(join(repoRoot, 'examples'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

describe('examples/', () => {
  it('holds aqm’s three README pipelines', () => {
    expect(examples).toEqual(expect.arrayContaining(['dev-team', 'design-session', 'human-deploy']));
  });

  it.each(examples)('%s: validates and passes `troupe test` against its script', async (name) => {
    const dir = project();
    const file = join(repoRoot, 'examples', name, 'agents.yaml');
    const validate = await troupe(dir, ['validate', file]);
    expect(validate.stdout + validate.stderr).not.toMatch(/error/);
    expect(validate.code).toBe(0);
    const test = await troupe(dir, ['test', '--file', file]);
    expect(test.stdout).toMatch(/^✓ /);
    expect(test.code).toBe(0);
  });

  it('`troupe test` fails when the pipeline does not complete', async () => {
    const dir = project({
      'p.yaml': 'agents:\n  - id: a\n    runtime: claude\n    gate: {type: llm, max_retries: 1}\n',
      'p.script.yaml':
        'agents:\n  a: ["meh"]\ngates:\n  a: [{decision: rejected, reason: "never good enough"}]\n',
    });
    const test = await troupe(dir, ['test', '--file', 'p.yaml']);
    expect(test.code).toBe(1);
    expect(test.stdout).toMatch(/✗ .*failed.*never good enough/);
  });
});
