import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rev, sh, status, tmpRepo, writeFiles } from '../../test/support/git-repo.js';
import { commitStage } from './commit.js';
import { mergeBranches, mergeIntoBase } from './merge.js';
import { pruneWorktrees } from './prune.js';
import { ensureBranchWorktree, ensureTaskWorktree, removeWorktree } from './task-worktree.js';
import { listWorktrees } from './worktree-status.js';

async function taskWithCommit(repo: string, taskId = 'T-1') {
  const wt = await ensureTaskWorktree({ repo, taskId, base: 'main' });
  writeFiles(wt.path, { [`${taskId}.txt`]: `${taskId}\n` });
  const sha = (await commitStage({ path: wt.path, message: taskId }))!;
  return { wt, sha };
}

const ended = (...ids: string[]) => new Set(ids);

describe('listWorktrees', () => {
  it('reports task, branch, base, ahead/behind, dirty, merged and pushed', async () => {
    const repo = await tmpRepo();
    const { wt, sha } = await taskWithCommit(repo);
    await sh(repo, 'commit', '--allow-empty', '-qm', 'main moves');
    writeFiles(wt.path, { 'wip.txt': 'wip' });
    const fan = await ensureBranchWorktree({ repo, taskId: 'T-1', agent: 'a' });

    expect(await listWorktrees(repo)).toEqual([
      {
        task: 'T-1',
        agent: null,
        kind: 'task',
        path: wt.path,
        branch: 'troupe/T-1',
        head: sha,
        base: 'main',
        ahead: 1,
        behind: 1,
        dirty: true,
        merged: false,
        pushed: false,
        missing: false,
      },
      {
        task: 'T-1',
        agent: 'a',
        kind: 'fan-out',
        path: fan.path,
        branch: 'troupe/T-1--a',
        head: sha,
        base: 'troupe/T-1',
        ahead: 0,
        behind: 0,
        dirty: false,
        merged: true,
        pushed: false,
        missing: false,
      },
    ]);
  });

  it('lists a branch troupe made whose worktree was removed', async () => {
    const repo = await tmpRepo();
    await taskWithCommit(repo);
    await removeWorktree({ repo, taskId: 'T-1' });
    expect(await listWorktrees(repo)).toMatchObject([{ task: 'T-1', kind: 'branch', path: null, ahead: 1 }]);
  });
});

describe('pruneWorktrees', () => {
  it('refuses an ended task with an unpushed, unmerged commit; --force keeps it as a tag first', async () => {
    const repo = await tmpRepo();
    const { wt, sha } = await taskWithCommit(repo);

    const refused = await pruneWorktrees(repo, { endedTasks: ended('T-1') });
    expect(refused).toMatchObject([
      {
        task: 'T-1',
        action: 'keep',
        reasons: ['commits not merged into main and not pushed'],
        archivedAs: null,
      },
    ]);
    expect(existsSync(wt.path)).toBe(true);
    expect(await rev(repo, 'troupe/T-1')).toBe(sha);

    const dry = await pruneWorktrees(repo, { endedTasks: ended('T-1'), force: true, dryRun: true });
    expect(dry).toMatchObject([{ action: 'remove', archivedAs: 'troupe/archive/T-1' }]);
    expect(existsSync(wt.path)).toBe(true);
    expect(await sh(repo, 'tag', '--list')).toBe('');

    const forced = await pruneWorktrees(repo, { endedTasks: ended('T-1'), force: true });
    expect(forced).toMatchObject([{ action: 'remove', archivedAs: 'troupe/archive/T-1' }]);
    expect(existsSync(wt.path)).toBe(false);
    expect(await sh(repo, 'branch', '--list', 'troupe/*')).toBe('');
    expect(await rev(repo, 'refs/tags/troupe/archive/T-1')).toBe(sha);
    expect(await listWorktrees(repo)).toEqual([]);
  });

  it('keeps an unended task and a dirty worktree (a running one even with force); force commits the uncommitted changes before archiving', async () => {
    const repo = await tmpRepo();
    const { wt } = await taskWithCommit(repo);
    await mergeIntoBase({ repo, taskId: 'T-1' });
    writeFiles(wt.path, { 'late.txt': 'late edit\n' });

    expect(await pruneWorktrees(repo, { endedTasks: ended() })).toMatchObject([
      { action: 'keep', reasons: ['task has not ended', 'uncommitted changes'] },
    ]);
    const runningTask = (task: string) => (task === 'T-1' ? 'task is running (process 7)' : null);
    expect(await pruneWorktrees(repo, { endedTasks: ended(), force: true, runningTask })).toMatchObject([
      { action: 'keep', running: true, reasons: ['task is running (process 7)', 'uncommitted changes'] },
    ]);
    expect(await status(wt.path)).toBe('?? late.txt');
    const [forced] = await pruneWorktrees(repo, { endedTasks: ended(), force: true });
    expect(forced).toMatchObject({ action: 'remove', archivedAs: 'troupe/archive/T-1' });
    expect(await sh(repo, 'show', `${forced!.committed}:late.txt`)).toBe('late edit');
    expect(await rev(repo, 'troupe/archive/T-1')).toBe(forced!.committed);
  });

  it('removes an ended task merged into base, its fan-out branches too, without tags', async () => {
    const repo = await tmpRepo();
    const { wt } = await taskWithCommit(repo);
    const fan = await ensureBranchWorktree({ repo, taskId: 'T-1', agent: 'a' });
    writeFiles(fan.path, { 'a.txt': 'a\n' });
    await commitStage({ path: fan.path, message: 'a' });
    await mergeBranches({ into: wt.path, branches: [fan.branch] });
    await mergeIntoBase({ repo, taskId: 'T-1' });
    const other = await taskWithCommit(repo, 'T-2');

    const actions = await pruneWorktrees(repo, { endedTasks: ended('T-1') });
    expect(actions.map((a) => [a.task, a.agent, a.action])).toEqual([
      ['T-1', 'a', 'remove'],
      ['T-1', null, 'remove'],
      ['T-2', null, 'keep'],
    ]);
    expect(existsSync(wt.path) || existsSync(fan.path)).toBe(false);
    expect(existsSync(other.wt.path)).toBe(true);
    expect(await sh(repo, 'tag', '--list')).toBe('');
    expect(await sh(repo, 'branch', '--list', '--format=%(refname:short)')).toBe('main\ntroupe/T-2');
    // again: nothing left to do
    expect((await pruneWorktrees(repo, { endedTasks: ended('T-1') })).map((a) => a.task)).toEqual(['T-2']);
  });

  it('removes an ended task whose commits are pushed, though not merged', async () => {
    const repo = await tmpRepo();
    const remote = mkdtempSync(join(tmpdir(), 'troupe-remote-'));
    await sh(remote, 'init', '-q', '--bare');
    await sh(repo, 'remote', 'add', 'origin', remote);
    const { wt, sha } = await taskWithCommit(repo);
    await sh(repo, 'push', '-q', 'origin', 'troupe/T-1');

    expect(await listWorktrees(repo)).toMatchObject([{ merged: false, pushed: true }]);
    expect(await pruneWorktrees(repo, { endedTasks: ended('T-1') })).toMatchObject([
      { action: 'remove', archivedAs: null },
    ]);
    expect(existsSync(wt.path)).toBe(false);
    expect(await rev(repo, 'origin/troupe/T-1')).toBe(sha);
  });

  it('a worktree directory deleted by hand is pruned like any other', async () => {
    const repo = await tmpRepo();
    const { wt, sha } = await taskWithCommit(repo);
    const { rmSync } = await import('node:fs');
    rmSync(wt.path, { recursive: true, force: true });
    expect(await listWorktrees(repo)).toMatchObject([{ missing: true, dirty: false }]);
    await pruneWorktrees(repo, { endedTasks: ended('T-1'), force: true });
    expect(await rev(repo, 'troupe/archive/T-1')).toBe(sha);
    expect((await sh(repo, 'worktree', 'list')).split('\n')).toHaveLength(1);
  });
});
