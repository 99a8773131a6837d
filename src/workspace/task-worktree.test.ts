import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { read, rev, sh, status, tmpRepo, writeFiles } from '../../test/support/git-repo.js';
import { commitStage } from './commit.js';
import { findRepo, isDirty } from './repo.js';
import { ensureBranchWorktree, ensureTaskWorktree, removeWorktree } from './task-worktree.js';

describe('ensureTaskWorktree', () => {
  it('creates .troupe/worktrees/<task> on troupe/<task> from base, ignored by the main checkout', async () => {
    const repo = await tmpRepo();
    const wt = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    expect(wt).toEqual({
      path: join(repo, '.troupe/worktrees/T-1'),
      branch: 'troupe/T-1',
      base: 'main',
      created: true,
      start: await rev(repo, 'main'),
    });
    expect(read(wt.path, 'README.md')).toBe('hello\n');
    expect(await rev(wt.path, 'HEAD')).toBe(await rev(repo, 'main'));
    expect(await status(repo)).toBe('');
    expect(readFileSync(join(repo, '.git/info/exclude'), 'utf8')).toContain('/.troupe/*\n');
    expect(await sh(repo, 'check-ignore', '.troupe/worktrees/T-1')).toBe('.troupe/worktrees/T-1');
    expect(await sh(repo, 'check-ignore', '.troupe/troupe.db', '.troupe/tasks/T-1/context.md')).toBe(
      '.troupe/troupe.db\n.troupe/tasks/T-1/context.md',
    );
    // what people write stays committable
    for (const file of ['.troupe/pipelines/x.yaml', '.troupe/config.yaml']) {
      expect(await sh(repo, 'check-ignore', '--no-index', '-q', file).catch(() => 'not ignored')).toBe(
        'not ignored',
      );
    }
    await ensureTaskWorktree({ repo, taskId: 'T-2', base: 'main' });
    expect(readFileSync(join(repo, '.git/info/exclude'), 'utf8').match(/\/\.troupe\/\*/g)).toHaveLength(1);
  });

  it('a worktree left half made (registered, locked initializing, files not checked out) is made again whole', async () => {
    const repo = await tmpRepo();
    const first = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    expect((await sh(repo, 'worktree', 'list', '--porcelain')).includes('locked')).toBe(false);
    expect(await status(first.path)).toBe('');
    // as a kill -9 between the registration and the checkout leaves it
    const path = join(repo, '.troupe/worktrees/T-2');
    await sh(
      repo,
      'worktree',
      'add',
      '--no-checkout',
      '--lock',
      '--reason',
      'initializing',
      '-b',
      'troupe/T-2',
      path,
      'main',
    );
    const again = await ensureTaskWorktree({ repo, taskId: 'T-2', base: 'main' });
    expect(again.path).toBe(path);
    expect(read(path, 'README.md')).toBe('hello\n');
    expect(await status(path)).toBe('');
    expect((await sh(repo, 'worktree', 'list', '--porcelain')).includes('locked')).toBe(false);
  });

  it('defaults base to the branch checked out in the main checkout', async () => {
    const repo = await tmpRepo();
    const wt = await ensureTaskWorktree({ repo, taskId: 'T-1' });
    expect(wt.base).toBe('main');
  });

  it('after a crash, reuses the worktree: no commit and no uncommitted edit is lost', async () => {
    const repo = await tmpRepo();
    const first = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    writeFiles(first.path, { 'a.txt': 'stage 1\n' });
    const sha = await commitStage({ path: first.path, message: 'stage 1' });
    writeFiles(first.path, { 'b.txt': 'half-done stage 2\n' }); // killed here, mid-stage
    await sh(repo, 'commit', '--allow-empty', '-q', '-m', 'main moved on');

    const again = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    const { start: _, ...reused } = first;
    expect(again).toEqual({ ...reused, created: false });
    expect(await rev(again.path, 'HEAD')).toBe(sha);
    expect(read(again.path, 'b.txt')).toBe('half-done stage 2\n');
    expect(read(again.path, 'a.txt')).toBe('stage 1\n');
  });

  it('a worktree directory deleted by hand is checked out again from its branch, commits intact', async () => {
    const repo = await tmpRepo();
    const wt = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    writeFiles(wt.path, { 'a.txt': 'x\n' });
    const sha = await commitStage({ path: wt.path, message: 'stage 1' });
    rmSync(wt.path, { recursive: true, force: true });

    const again = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    expect(again.created).toBe(false);
    expect(await rev(again.path, 'HEAD')).toBe(sha);
    expect(read(again.path, 'a.txt')).toBe('x\n');
  });

  it('a removed worktree whose branch survived is checked out again', async () => {
    const repo = await tmpRepo();
    const wt = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    writeFiles(wt.path, { 'a.txt': 'x\n' });
    const sha = await commitStage({ path: wt.path, message: 'stage 1' });
    expect(await removeWorktree({ repo, taskId: 'T-1' })).toBe(true);
    expect(existsSync(wt.path)).toBe(false);
    expect(await removeWorktree({ repo, taskId: 'T-1' })).toBe(false);

    const again = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    expect(await rev(again.path, 'HEAD')).toBe(sha);
  });

  it('refuses to remove a worktree with uncommitted changes unless forced', async () => {
    const repo = await tmpRepo();
    const wt = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    writeFiles(wt.path, { 'a.txt': 'x\n' });
    await expect(removeWorktree({ repo, taskId: 'T-1' })).rejects.toThrow(/uncommitted changes/);
    expect(read(wt.path, 'a.txt')).toBe('x\n');
    expect(await removeWorktree({ repo, taskId: 'T-1', force: true })).toBe(true);
  });

  it('never writes over a directory that is not its worktree', async () => {
    const repo = await tmpRepo();
    writeFiles(repo, { '.troupe/worktrees/T-1/mine.txt': 'user data\n' });
    await expect(ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' })).rejects.toThrow(
      /exists and is not a git worktree/,
    );
    expect(read(repo, '.troupe/worktrees/T-1/mine.txt')).toBe('user data\n');
  });

  it('leaves a dirty main checkout exactly as it was', async () => {
    const repo = await tmpRepo({ 'README.md': 'hello\n', 'src/app.js': 'v1\n' });
    writeFiles(repo, { 'src/app.js': 'my local edit\n', 'notes.txt': 'untracked\n' });
    await sh(repo, 'add', 'notes.txt');
    writeFiles(repo, { 'scratch.txt': 'untracked too\n' });
    const before = await status(repo);
    const head = await rev(repo, 'HEAD');

    const wt = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    expect(read(wt.path, 'src/app.js')).toBe('v1\n'); // from the commit, not the dirty tree
    expect(existsSync(join(wt.path, 'notes.txt'))).toBe(false);
    writeFiles(wt.path, { 'src/app.js': 'agent edit\n' });
    await commitStage({ path: wt.path, message: 'stage' });

    expect(await status(repo)).toBe(before);
    expect(await rev(repo, 'HEAD')).toBe(head);
    expect(read(repo, 'src/app.js')).toBe('my local edit\n');
    expect(await isDirty(repo)).toBe(true);
  });

  it.each(['../evil', 'a/b', 'a..b', '..', '', '-rf', 'a--b', 'a b', 'T-1\n', '.hidden'])(
    'rejects the task id %j and writes nothing',
    async (taskId) => {
      const repo = await tmpRepo();
      const siblings = readdirSync(dirname(repo)).length;
      await expect(ensureTaskWorktree({ repo, taskId, base: 'main' })).rejects.toThrow(/unsafe task id/);
      expect(existsSync(join(repo, '.troupe'))).toBe(false);
      expect(readdirSync(dirname(repo)).length).toBe(siblings);
      expect(await sh(repo, 'branch', '--list')).toBe('* main');
    },
  );

  it('rejects an unsafe agent id for a fan-out branch', async () => {
    const repo = await tmpRepo();
    await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    for (const agent of ['../x', 'a/b', '-x', '']) {
      await expect(ensureBranchWorktree({ repo, taskId: 'T-1', agent })).rejects.toThrow(/unsafe agent id/);
    }
  });

  it('an unknown base is a not-found error', async () => {
    const repo = await tmpRepo();
    await expect(ensureTaskWorktree({ repo, taskId: 'T-1', base: 'nope' })).rejects.toThrow(/not a commit/);
  });

  it('a repository without a commit (git init only) says to make a first commit', async () => {
    const repo = mkdtempSync(join(tmpdir(), 'troupe-empty-'));
    await sh(repo, 'init', '-q', '--initial-branch=master');
    await expect(ensureTaskWorktree({ repo, taskId: 'T-1' })).rejects.toMatchObject({
      name: 'NoCommitError',
      code: 'repo_without_commits',
      message: expect.stringMatching(
        /^master in .* has no commit yet, .*make a first commit, then run again$/,
      ),
      hint: expect.stringContaining('git commit --allow-empty -m "first commit"'),
    });
  });
});

describe('ensureBranchWorktree', () => {
  it('puts a fan-out branch beside the task branch (troupe/<task>--<agent>), started from it', async () => {
    const repo = await tmpRepo();
    const task = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    writeFiles(task.path, { 'plan.md': 'plan\n' });
    const planned = await commitStage({ path: task.path, message: 'plan' });

    const a = await ensureBranchWorktree({ repo, taskId: 'T-1', agent: 'frontend' });
    expect(a).toEqual({
      path: join(repo, '.troupe/worktrees/T-1--frontend'),
      branch: 'troupe/T-1--frontend',
      base: 'troupe/T-1',
      created: true,
      start: planned,
    });
    expect(await rev(a.path, 'HEAD')).toBe(planned);
    expect((await ensureBranchWorktree({ repo, taskId: 'T-1', agent: 'frontend' })).created).toBe(false);
  });
});

describe('findRepo', () => {
  it('finds the main checkout, also from inside a task worktree; null outside git', async () => {
    const repo = await tmpRepo({ 'src/x.txt': 'x\n' });
    expect(await findRepo(join(repo, 'src'))).toBe(repo);
    const wt = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    expect(await findRepo(join(wt.path, 'src'))).toBe(repo);
    expect(await findRepo(dirname(repo))).toBeNull();
  });

  it('isDirty sees modified, staged and untracked files', async () => {
    const repo = await tmpRepo();
    expect(await isDirty(repo)).toBe(false);
    writeFileSync(join(repo, 'new.txt'), 'x');
    expect(await isDirty(repo)).toBe(true);
  });
});

describe('parallel tasks', () => {
  it('eight tasks start at once in one repository, each on its own branch', async () => {
    const repo = await tmpRepo();
    const ids = Array.from({ length: 8 }, (_, i) => `T-${i}`);
    const made = await Promise.all(ids.map((taskId) => ensureTaskWorktree({ repo, taskId, base: 'main' })));
    expect(made.map((w) => w.branch)).toEqual(ids.map((id) => `troupe/${id}`));
    for (const id of ids) expect(await sh(repo, 'config', `branch.troupe/${id}.troupeBase`)).toBe('main');
    const again = await Promise.all(ids.map((taskId) => ensureTaskWorktree({ repo, taskId, base: 'main' })));
    expect(again.every((w) => !w.created)).toBe(true);
  });
});
