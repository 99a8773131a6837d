import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { read, sh, tmpRepo, writeFiles } from './support/git-repo.js';
import { eventLog, troupe, troupeJson } from './support/troupe.js';

const pipeline = (merge: string) => `workspace: {isolation: worktree, merge: ${merge}}
agents:
  - id: dev
    runtime: claude
    handoffs: [{to: tester}]
  - id: tester
    runtime: claude
`;
const script = `agents:
  dev:
    - reply: "added health"
      write: {src/health.ts: "export const ok = true;\\n"}
  tester:
    - reply: "added a test"
      write: {test/health.test.ts: "ok\\n"}
`;

describe('tasks in their own git worktree', () => {
  it('a repository with no commit fails the task with what to do: in `run`, `status` and --json', async () => {
    const dir = await tmpRepo();
    await sh(dir, 'checkout', '--quiet', '--orphan', 'empty');
    writeFiles(dir, { 'p.yaml': pipeline('on_complete'), 's.yaml': script });
    const run = await troupe(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    expect(run.code).toBe(1);
    const hint = '  hint: commit what is there (git add -A && git commit -m "first commit")';
    expect(run.stderr).toMatch(/✘ failed T-\S+: empty in .* has no commit yet/);
    expect(run.stderr).toContain(hint);
    const id = /troupe (T-\S+)/.exec(run.stderr)![1]!;
    expect((await troupe(dir, ['status', id])).stdout).toContain(hint);
    const { json } = await troupeJson<{ hint: string }>(dir, ['status', id]);
    expect(json.hint).toMatch(/^commit what is there/);
  });

  it('`troupe test` leaves the repository as it was: nothing merged, no worktree, branch or tag; a failed one keeps its worktree to look at', async () => {
    const dir = await tmpRepo();
    writeFiles(dir, { 'p.yaml': pipeline('on_complete'), 's.yaml': script });
    await sh(dir, 'add', '--all');
    await sh(dir, 'commit', '--quiet', '-m', 'pipeline');
    const head = await sh(dir, 'rev-parse', 'HEAD');
    const refs = () => sh(dir, 'for-each-ref', '--format=%(refname)');
    const before = await refs();
    const passed = await troupe(dir, ['test', '--file', 'p.yaml', '--script', 's.yaml']);
    expect(passed.code, passed.stderr).toBe(0);
    expect(passed.stdout).toMatch(/✓ .*completed in 2 stages/);
    expect(await sh(dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(await refs()).toBe(before);
    expect((await sh(dir, 'worktree', 'list')).split('\n')).toHaveLength(1);
    expect(await sh(dir, 'status', '--porcelain')).toBe('');

    writeFiles(dir, { 'bad.yaml': script.replace(/- reply: "added a test"\n.*\n/, '- error: crash\n') });
    const failed = await troupe(dir, ['test', '--file', 'p.yaml', '--script', 'bad.yaml']);
    expect(failed.code, failed.stderr).toBe(1);
    const kept = /its worktree is kept to look at: (\S+)/.exec(failed.stdout)?.[1];
    expect(kept, failed.stdout).toBeDefined();
    expect(read(kept!, 'src/health.ts')).toBe('export const ok = true;\n');
    expect(await sh(dir, 'rev-parse', 'HEAD')).toBe(head);
  });

  it('each stage is a commit on the task branch, merged into base at the end; the main checkout is not worked in', async () => {
    const repo = await tmpRepo();
    writeFiles(repo, { '.troupe/pipelines/default.yaml': pipeline('on_complete'), 'script.yaml': script });
    await sh(repo, 'add', '-A');
    await sh(repo, 'commit', '-qm', 'pipeline');
    const { code, json } = await troupeJson(repo, ['run', 'add /health', '--script', 'script.yaml']);
    expect(json.error).toBeNull();
    expect(code).toBe(0);
    const log = eventLog(repo, json.id);
    const ready = log.find((e) => e.type === 'workspace_ready')!.data;
    expect(ready.branch).toBe(`troupe/${json.id}`);
    expect(String(ready.path)).toBe(join(repo, '.troupe', 'worktrees', json.id));
    expect(log.filter((e) => e.type === 'workspace_committed')).toHaveLength(2);
    expect(log.find((e) => e.type === 'workspace_merged')?.data).toMatchObject({ into: 'main' });
    // the work is on main now, one commit per stage, with its trailers
    expect(await sh(repo, 'show', 'main:src/health.ts')).toBe('export const ok = true;');
    const messages = await sh(repo, 'log', 'main', '--format=%B', '-n', '2');
    expect(messages).toContain(`Troupe-Task: ${json.id}`);
    expect(messages).toContain('Troupe-Agent: tester');
  });

  it('once merged, the worktree and branch are removed (no pile-up); a follow-up and a restart still work', async () => {
    const repo = await tmpRepo();
    writeFiles(repo, { '.troupe/pipelines/default.yaml': pipeline('on_complete'), 'script.yaml': script });
    await sh(repo, 'add', '-A');
    await sh(repo, 'commit', '-qm', 'pipeline');
    const { json } = await troupeJson(repo, ['run', 'add /health', '--script', 'script.yaml']);
    expect(json.status).toBe('completed');
    expect(eventLog(repo, json.id).find((e) => e.type === 'workspace_removed')?.data).toMatchObject({
      removed: [`troupe/${json.id}`],
    });
    expect(await sh(repo, 'worktree', 'list', '--porcelain')).not.toContain(json.id);
    expect(await sh(repo, 'branch', '--list', 'troupe/*')).toBe('');
    expect((await troupe(repo, ['status', json.id])).stdout).toMatch(
      /merged into main \([0-9a-f]{12}\); worktree and branch removed/,
    );
    const fix = await troupeJson(repo, ['fix', json.id, 'also a readme', '--script', 'script.yaml']);
    expect(fix.json.status).toBe('completed');
    const again = await troupeJson(repo, ['restart', json.id, '--from-stage', '2']);
    expect(again.json.status).toBe('completed');
    expect(await sh(repo, 'show', 'main:test/health.test.ts')).toBe('ok');
  });

  it('merge: manual leaves the branch for `troupe merge`, which leaves alone a checkout whose edits it would overwrite', async () => {
    const repo = await tmpRepo();
    writeFiles(repo, { '.troupe/pipelines/default.yaml': pipeline('manual'), 'script.yaml': script });
    await sh(repo, 'add', '-A');
    await sh(repo, 'commit', '-qm', 'pipeline');
    writeFiles(repo, { 'src/health.ts': 'my own edit in progress\n' });
    const { json } = await troupeJson(repo, ['run', 'add /health', '--script', 'script.yaml']);
    expect(json.status).toBe('completed');
    expect(read(repo, 'src/health.ts')).toBe('my own edit in progress\n');
    expect(await sh(repo, 'show', `troupe/${json.id}:src/health.ts`)).toBe('export const ok = true;');
    const refused = await troupe(repo, ['merge', json.id]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('would overwrite uncommitted changes to src/health.ts');
    expect(read(repo, 'src/health.ts')).toBe('my own edit in progress\n');
    expect(await sh(repo, 'show', 'main:README.md')).toBe('hello');
  });

  it("merge: on_complete merges beside the user's untracked notes and unrelated edits, which stay exactly as they were", async () => {
    const repo = await tmpRepo();
    writeFiles(repo, { '.troupe/pipelines/default.yaml': pipeline('on_complete'), 'script.yaml': script });
    await sh(repo, 'add', '-A');
    await sh(repo, 'commit', '-qm', 'pipeline');
    writeFiles(repo, { 'notes.txt': 'my notes\n', 'README.md': 'my own edit in progress\n' });
    const { code, json } = await troupeJson(repo, ['run', 'add /health', '--script', 'script.yaml']);
    expect([code, json.status]).toEqual([0, 'completed']);
    expect(eventLog(repo, json.id).find((e) => e.type === 'workspace_merged')?.data).toMatchObject({
      into: 'main',
    });
    expect(read(repo, 'src/health.ts')).toBe('export const ok = true;\n');
    expect(await sh(repo, 'show', 'main:src/health.ts')).toBe('export const ok = true;');
    expect([read(repo, 'notes.txt'), read(repo, 'README.md')]).toEqual([
      'my notes\n',
      'my own edit in progress\n',
    ]);
    expect(await sh(repo, 'status', '--porcelain')).toBe(' M README.md\n?? notes.txt');
  });

  it('merge: on_complete with a main checkout whose edits it would overwrite completes the task, leaves the checkout alone and says why it did not merge', async () => {
    const repo = await tmpRepo();
    writeFiles(repo, { '.troupe/pipelines/default.yaml': pipeline('on_complete'), 'script.yaml': script });
    await sh(repo, 'add', '-A');
    await sh(repo, 'commit', '-qm', 'pipeline');
    writeFiles(repo, { 'src/health.ts': 'my own edit in progress\n' });
    const { code, json } = await troupeJson(repo, ['run', 'add /health', '--script', 'script.yaml']);
    expect(code).toBe(0);
    expect(json.status).toBe('completed');
    expect(read(repo, 'src/health.ts')).toBe('my own edit in progress\n');
    expect(eventLog(repo, json.id).find((e) => e.type === 'workspace_merge_failed')?.data).toMatchObject({
      into: 'main',
      reason: expect.stringMatching(/uncommitted changes to src\/health.ts/),
    });
    const status = await troupe(repo, ['status', json.id]);
    expect(status.stdout).toMatch(
      new RegExp(`not merged into main: .*uncommitted changes.*troupe merge ${json.id}`),
    );
    // once the checkout is clean, troupe merge finishes the job
    rmSync(join(repo, 'src', 'health.ts'));
    expect((await troupe(repo, ['merge', json.id])).code).toBe(0);
    expect(await sh(repo, 'show', 'main:src/health.ts')).toBe('export const ok = true;');
  });

  it('troupe merge takes only what the log recorded: a commit made on the task branch behind its back is kept as a tag, not merged', async () => {
    const repo = await tmpRepo();
    writeFiles(repo, { '.troupe/pipelines/default.yaml': pipeline('manual'), 'script.yaml': script });
    await sh(repo, 'add', '-A');
    await sh(repo, 'commit', '-qm', 'pipeline');
    const { json } = await troupeJson(repo, ['run', 'add /health', '--script', 'script.yaml']);
    expect(json.status).toBe('completed');
    // a superseded attempt's late commit, as a stalled worker made it (issue #33, D2)
    const worktree = join(repo, '.troupe', 'worktrees', json.id);
    writeFiles(worktree, { 'stray.txt': 'written by an attempt the log calls interrupted\n' });
    await sh(worktree, 'add', '-A');
    await sh(worktree, 'commit', '-qm', 'late');
    const merged = await troupe(repo, ['merge', json.id]);
    expect(merged.code, merged.stderr).toBe(0);
    expect(merged.stderr).toMatch(new RegExp(`kept as tag troupe/stray/${json.id}/1, not merged`));
    expect(await sh(repo, 'show', 'main:src/health.ts')).toBe('export const ok = true;');
    expect(await sh(repo, 'ls-tree', '--name-only', 'main')).not.toContain('stray.txt');
    expect(await sh(repo, 'show', `troupe/stray/${json.id}/1:stray.txt`)).toContain('interrupted');
  });

  it('restart --from-stage puts the worktree back at the earlier stage commit, keeping the later one as a tag', async () => {
    const repo = await tmpRepo();
    writeFiles(repo, { '.troupe/pipelines/default.yaml': pipeline('manual'), 'script.yaml': script });
    await sh(repo, 'add', '-A');
    await sh(repo, 'commit', '-qm', 'pipeline');
    const first = await troupeJson(repo, ['run', 'add /health', '--script', 'script.yaml']);
    const branch = `troupe/${first.json.id}`;
    const before = (await sh(repo, 'rev-parse', branch)).trim();
    const again = await troupeJson(repo, ['restart', first.json.id, '--from-stage', '2']);
    expect(again.json.status).toBe('completed');
    // one commit per stage on the branch, not three: the old stage 2 was set aside, not stacked
    expect((await sh(repo, 'rev-list', '--count', `main..${branch}`)).trim()).toBe('2');
    expect(await sh(repo, 'tag', '--list', 'troupe/archive/*')).toContain(
      `troupe/archive/${first.json.id}-${before.slice(0, 12)}`,
    );
  });
});
