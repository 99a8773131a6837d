import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type LinearMock, startLinearMock } from './fixtures/linear-api/server.js';
import { tmpRepo } from './support/git-repo.js';
import { troupe } from './support/troupe.js';

/**
 * WORKFLOW.md's hooks and tracker.assignee under `troupe watch --once --workflow`, against the
 * Linear mock: the hooks are real `sh -lc` processes that leave marker files in $MARKS.
 */

let mock: LinearMock;
afterEach(async () => mock?.close());

const indent = (script: string) =>
  script
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');

function workflow(m: LinearMock, hooks: Record<string, string>, extra = ''): string {
  const hookLines = Object.entries(hooks)
    .map(([name, value]) =>
      name === 'timeout_ms' ? `  ${name}: ${value}` : `  ${name}: |\n${indent(value)}`,
    )
    .join('\n');
  return `---
tracker:
  kind: linear
  project_slug: ${m.projectSlug}
  endpoint: ${m.url}
  api_key: $MY_LINEAR_KEY
${extra}hooks:
${hookLines}
agent:
  max_retry_backoff_ms: 100
  # one task per issue here: continuation turns are watch-turns.test.ts's
  max_turns: 1
codex:
  command: codex app-server
---
You are working on {{ issue.identifier }}.
`;
}

const SCRIPT = 'agents:\n  codex:\n    - "Done."\n';
const lines = (file: string) =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('troupe watch --workflow: hooks and assignee (Linear mock)', { timeout: 90_000 }, () => {
  it('after_create once across two attempts, a failed before_run fails the attempt, after_run failure ignored, before_remove on a terminal issue', async () => {
    mock = await startLinearMock();
    const issue = mock.addIssue({ title: 'Fix login', description: '$(touch pwned) `touch pwned`' });
    const marks = mkdtempSync(join(tmpdir(), 'troupe-hook-marks-'));
    const dir = await tmpRepo({
      'WORKFLOW.md': workflow(mock, {
        after_create: 'echo "$TROUPE_ISSUE_IDENTIFIER" >> "$MARKS/after_create"',
        // fails on the first attempt only
        before_run:
          'n=$(cat "$MARKS/before_run" 2>/dev/null | wc -l)\necho "$(pwd)" >> "$MARKS/before_run"\n[ "$n" -ge 1 ] || { echo "not ready yet"; exit 3; }',
        after_run: 'echo "$(pwd)" >> "$MARKS/after_run"\nexit 7',
        before_remove: 'echo "$(pwd)" >> "$MARKS/before_remove"',
      }),
      'script.yaml': SCRIPT,
    });
    const env = { MY_LINEAR_KEY: mock.apiKey, MARKS: marks };
    const watch = () =>
      troupe(dir, ['watch', '--workflow', 'WORKFLOW.md', '--once', '--script', 'script.yaml'], env);

    const first = await watch();
    expect(first.code).toBe(0);
    expect(first.stderr).toContain('ENG-1: hook before_run | not ready yet');
    expect(first.stderr).toMatch(/^ENG-1: hook before_run failed \(exit 3\)$/m);
    expect(first.stderr).toMatch(
      /^ENG-1: task T-[0-9A-F]{6} hook before_run failed \(exit 3\); retry 1 of 3 in 0 s$/m,
    );
    expect(lines(join(marks, 'after_create'))).toEqual(['ENG-1']);
    // after each attempt once the workspace exists, a failed before_run too (Symphony's `after`)
    expect(lines(join(marks, 'after_run'))).toHaveLength(1);
    expect(first.stderr).toMatch(/^ENG-1: hook after_run failed \(exit 7\); ignored$/m);
    let [task] = JSON.parse((await troupe(dir, ['list', '--json'])).stdout);
    expect(task.status).toBe('pending');

    await pause(300); // the retry is due after 100 ms
    const second = await watch();
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(/^ENG-1: hook after_run failed \(exit 7\); ignored$/m);
    [task] = JSON.parse((await troupe(dir, ['list', '--json'])).stdout);
    expect(task.status).toBe('completed');
    // one workspace, made once, every hook run in it
    const worktree = join(dir, '.troupe', 'worktrees', task.id);
    expect(lines(join(marks, 'after_create'))).toEqual(['ENG-1']);
    expect(lines(join(marks, 'before_run')).map((p) => p.endsWith(`/.troupe/worktrees/${task.id}`))).toEqual([
      true,
      true,
    ]);
    expect(lines(join(marks, 'after_run'))).toHaveLength(2);
    expect(existsSync(worktree)).toBe(true);
    // issue text reached no hook as a command
    expect(existsSync(join(worktree, 'pwned'))).toBe(false);

    issue.state = 'Done';
    const third = await watch();
    expect(third.code).toBe(0);
    expect(lines(join(marks, 'before_remove'))).toHaveLength(1);
    expect(lines(join(marks, 'before_remove'))[0]).toMatch(new RegExp(`/\\.troupe/worktrees/${task.id}$`));
    expect(existsSync(worktree)).toBe(false);
  });

  it('a hook past timeout_ms is killed with what it started, in one line, and the attempt fails', async () => {
    mock = await startLinearMock();
    mock.addIssue({ title: 'Slow' });
    const marks = mkdtempSync(join(tmpdir(), 'troupe-hook-marks-'));
    const dir = await tmpRepo({
      'WORKFLOW.md': workflow(mock, {
        before_run: '(sleep 2; echo late > "$MARKS/late") &\nsleep 30',
        timeout_ms: '500',
      }),
      'script.yaml': SCRIPT,
    });
    const run = await troupe(
      dir,
      ['watch', '--workflow', 'WORKFLOW.md', '--once', '--script', 'script.yaml'],
      { MY_LINEAR_KEY: mock.apiKey, MARKS: marks },
    );
    expect(run.code).toBe(0);
    expect(run.stderr.split('\n').filter((l) => l.includes('timed out'))).toEqual([
      'ENG-1: hook before_run failed (timed out after 500 ms: killed)',
      expect.stringMatching(
        /^ENG-1: task T-[0-9A-F]{6} hook before_run failed \(timed out after 500 ms: killed\); retry 1 of 3/,
      ),
    ]);
    // the background child went with its group
    await pause(2500);
    expect(existsSync(join(marks, 'late'))).toBe(false);
    const [task] = JSON.parse((await troupe(dir, ['list', '--json'])).stdout);
    expect(task.status).toBe('pending');
  });

  it('a before_run that always fails: retried, then given up; the task is cancelled, not run again by a later poll', async () => {
    mock = await startLinearMock();
    const issue = mock.addIssue({ title: 'Never ready' });
    const marks = mkdtempSync(join(tmpdir(), 'troupe-hook-marks-'));
    const dir = await tmpRepo({
      'WORKFLOW.md': workflow(mock, { before_run: 'echo x >> "$MARKS/before_run"\nexit 1' }),
      'script.yaml': SCRIPT,
    });
    const env = { MY_LINEAR_KEY: mock.apiKey, MARKS: marks };
    const watch = () =>
      troupe(dir, ['watch', '--workflow', 'WORKFLOW.md', '--once', '--script', 'script.yaml'], env);
    let last = await watch();
    for (let retry = 1; retry <= 3; retry++) {
      expect(last.stderr).toContain(`retry ${retry} of 3`);
      await pause(300);
      last = await watch();
    }
    expect(last.stderr).toMatch(/task T-[0-9A-F]{6} hook before_run failed \(exit 1\) 4 times; given up$/m);
    expect(lines(join(marks, 'before_run'))).toHaveLength(4);
    const [task] = JSON.parse((await troupe(dir, ['list', '--json'])).stdout);
    expect(task.status).toBe('cancelled');
    expect(issue.comments.at(-1)?.body).toContain('troupe gave up on this issue after 4 tries');
    await watch();
    expect(lines(join(marks, 'before_run'))).toHaveLength(4);
    expect(JSON.parse((await troupe(dir, ['list', '--json'])).stdout)).toHaveLength(1);
  });

  it('tracker.assignee: only the issues assigned to that user are candidates (me: the key’s user), from WORKFLOW.md and from config.yaml', async () => {
    mock = await startLinearMock();
    mock.addIssue({ title: 'Mine', assigneeId: mock.viewerId });
    mock.addIssue({ title: 'Nobody’s' });
    const other = mock.addIssue({ title: 'Theirs', assigneeId: 'user-2' });
    const dir = await tmpRepo({
      'WORKFLOW.md': workflow(mock, { after_create: 'true' }, '  assignee: me\n'),
      'script.yaml': SCRIPT,
    });
    const dry = await troupe(dir, ['watch', '--workflow', 'WORKFLOW.md', '--once', '--dry-run', '--json'], {
      MY_LINEAR_KEY: mock.apiKey,
    });
    expect(dry.stderr).toBe('');
    const poll = JSON.parse(dry.stdout);
    expect(poll.start.map((s: { identifier: string }) => s.identifier)).toEqual(['ENG-1']);
    expect(poll.skipped).toEqual([]);
    expect(mock.requests.some((r) => r.operation === 'TroupeLinearAssignedCandidates')).toBe(true);

    const configured = await tmpRepo({
      '.troupe/config.yaml': `tracker:\n  kind: linear\n  project_slug: ${mock.projectSlug}\n  endpoint: ${mock.url}\n  assignee: user-2\n`,
    });
    const fromConfig = await troupe(configured, ['watch', '--once', '--dry-run', '--json'], {
      LINEAR_API_KEY: mock.apiKey,
    });
    expect(fromConfig.stderr).toBe('');
    const polled = JSON.parse(fromConfig.stdout);
    expect([...polled.start, ...polled.skipped].map((s: { id: string }) => s.id)).toEqual([other.id]);
  });
});
