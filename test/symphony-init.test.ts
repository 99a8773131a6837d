import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { troupe } from './support/troupe.js';

// AMQ's `integration symphony init`, as its README types it, through the built CLI: WORKFLOW.md's
// hooks get the managed emit fragment, and a hook run by Symphony mails the agent.

const WORKFLOW = `---
# which tracker feeds this workflow
tracker:
  kind: linear   # kept as written
hooks:
  after_create: |
    git clone "$REPO" .
---

Work on {{ issue.identifier }}.
`;

describe('troupe bus integration symphony init', () => {
  it('adds the managed emit fragment to the four hooks, keeps the rest, is idempotent, and the hooks mail the agent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-symphony-'));
    const mail = join(dir, 'mail');
    expect((await troupe(dir, ['bus', 'init', '--root', mail, '--agents', 'codex'])).code).toBe(0);
    writeFileSync(join(dir, 'WORKFLOW.md'), WORKFLOW);

    const check = await troupe(dir, [
      'bus',
      'integration',
      'symphony',
      'init',
      '--me',
      'codex',
      '--check',
      '--json',
    ]);
    expect(check.code, check.stderr).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ hooks_found: false, check_only: true });
    expect(readFileSync(join(dir, 'WORKFLOW.md'), 'utf8')).toBe(WORKFLOW);

    const init = await troupe(dir, [
      'bus',
      'integration',
      'symphony',
      'init',
      '--me',
      'codex',
      '--root',
      mail,
      '--json',
    ]);
    expect(init.code, init.stderr).toBe(0);
    expect(JSON.parse(init.stdout)).toMatchObject({ created: true, hooks_found: false });
    const written = readFileSync(join(dir, 'WORKFLOW.md'), 'utf8');
    expect(written).toContain('# which tracker feeds this workflow\n');
    expect(written).toContain('# kept as written');
    expect(written.endsWith('---\n\nWork on {{ issue.identifier }}.\n')).toBe(true);
    const hooks = (parse(written.split('---\n')[1]!) as { hooks: Record<string, string> }).hooks;
    expect(Object.keys(hooks)).toEqual(['after_create', 'before_run', 'after_run', 'before_remove']);
    expect(hooks.after_create).toMatch(
      /^git clone "\$REPO" \.\n# BEGIN AMQ MANAGED\n.* bus integration symphony emit --event after_create --me codex --root '.*' \|\| true\n# END AMQ MANAGED\n$/,
    );

    // a second run writes nothing; --force rewrites the fragments in place, the user's lines kept
    const again = await troupe(dir, [
      'bus',
      'integration',
      'symphony',
      'init',
      '--me',
      'codex',
      '--root',
      mail,
    ]);
    expect(again.stdout).toMatch(/managed hooks already present/);
    expect(readFileSync(join(dir, 'WORKFLOW.md'), 'utf8')).toBe(written);
    const forced = await troupe(dir, [
      'bus',
      'integration',
      'symphony',
      'init',
      '--me',
      'codex',
      '--root',
      mail,
      '--force',
      '--json',
    ]);
    expect(JSON.parse(forced.stdout)).toMatchObject({ updated: true });
    expect(readFileSync(join(dir, 'WORKFLOW.md'), 'utf8')).toBe(written);

    // Symphony runs the hook in the workspace: the agent gets the event as mail
    const workspace = mkdtempSync(join(tmpdir(), 'ABC-123-'));
    execFileSync('bash', ['-c', hooks.after_run!], {
      cwd: workspace,
      env: { ...process.env, NO_COLOR: '1' },
    });
    const inbox = JSON.parse(
      (await troupe(dir, ['bus', 'list', '--root', mail, '--me', 'codex', '--json'])).stdout,
    ) as Array<{
      subject: string;
      labels: string[];
    }>;
    expect(inbox).toHaveLength(1);
    expect(inbox[0]!.labels).toContain('orchestrator:symphony');

    // no WORKFLOW.md: exit 3, one line
    const none = await troupe(workspace, ['bus', 'integration', 'symphony', 'init', '--me', 'codex']);
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/^troupe: .*WORKFLOW\.md not found/);
  }, 60_000);
});
