import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { read, rev, sh, tmpRepo, writeFiles } from '../../test/support/git-repo.js';
import { keepCheckoutsReady, takeCheckout } from './checkout-pool.js';
import { commitStage } from './commit.js';
import { branchBase, ensureBranchWorktree, ensureTaskWorktree } from './task-worktree.js';
import { releaseVerifyCheckouts, withVerifyCheckout } from './verify-checkout.js';

/** The task's checkouts under .troupe/tmp (made ahead, or a verifier's). */
async function scratchCheckouts(repo: string): Promise<string[]> {
  const list = await sh(repo, 'worktree', 'list', '--porcelain');
  return list
    .split('\n')
    .filter((line) => line.startsWith('worktree ') && line.includes('/.troupe/tmp/verify-'))
    .map((line) => line.slice('worktree '.length));
}

async function waitFor<T>(probe: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = await probe();
    if (value !== null) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('timed out');
}

describe('checkouts made ahead', () => {
  it("a fan-out branch's worktree is a checkout made ahead, moved to the task branch's tip and given its branch", async () => {
    const repo = await tmpRepo();
    const task = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    keepCheckoutsReady(repo, 'T-1', 'refs/heads/troupe/T-1', 1);
    const [ahead] = await waitFor(async () =>
      (await scratchCheckouts(repo)).length ? scratchCheckouts(repo) : null,
    );
    // the task branch moves on after the checkout was made: the branch starts from where it is now
    writeFiles(task.path, { 'merged.txt': 'a piece merged meanwhile\n' });
    const tip = (await commitStage({ path: task.path, message: 'merged' }))!;

    const wt = await ensureBranchWorktree({ repo, taskId: 'T-1', agent: 'piece-a' });
    expect(wt.created).toBe(true);
    expect(wt.start).toBe(tip);
    expect(existsSync(ahead!)).toBe(false);
    expect(wt.path).toBe(join(repo, '.troupe/worktrees/T-1--piece-a'));
    expect(await sh(wt.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('troupe/T-1--piece-a');
    expect(await rev(wt.path, 'HEAD')).toBe(tip);
    expect(read(wt.path, 'merged.txt')).toBe('a piece merged meanwhile\n');
    expect(await sh(wt.path, 'status', '--porcelain')).toBe('');
    expect(await branchBase(repo, 'troupe/T-1--piece-a')).toBe('troupe/T-1');
    // not locked: `git worktree remove` works on it as on any other
    expect(await sh(repo, 'worktree', 'list', '--porcelain')).not.toContain('locked');
    await releaseVerifyCheckouts(repo, 'T-1');
  });

  it("a verifier's checkout, once it is done, becomes a piece's worktree with nothing of the verifier's in it", async () => {
    const repo = await tmpRepo();
    const task = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    writeFiles(task.path, { 'README.md': 'the task’s\n' });
    const sha = (await commitStage({ path: task.path, message: 'work' }))!;
    const used = await withVerifyCheckout({ repo, taskId: 'T-1', sha }, async (checkout) => {
      // a verifier that edits, leaves files and commits
      writeFiles(checkout.path, { 'README.md': 'the verifier’s\n', 'scratch.log': 'left\n' });
      await sh(checkout.path, 'commit', '-qam', 'verifier');
      writeFiles(checkout.path, { 'README.md': 'edited again\n' });
      return checkout.path;
    });

    const wt = await ensureBranchWorktree({ repo, taskId: 'T-1', agent: 'piece-a' });
    expect(existsSync(used)).toBe(false);
    expect(wt.start).toBe(sha);
    expect(await sh(wt.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('troupe/T-1--piece-a');
    expect(read(wt.path, 'README.md')).toBe('the task’s\n');
    expect(existsSync(join(wt.path, 'scratch.log'))).toBe(false);
    expect(await sh(wt.path, 'status', '--porcelain', '--ignored')).toBe('');
    await releaseVerifyCheckouts(repo, 'T-1');
  });

  it('a checkout moved into place but not given its branch (killed between the two) is made again', async () => {
    const repo = await tmpRepo();
    await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    const path = join(repo, '.troupe/worktrees/T-1--piece-a');
    await sh(repo, 'worktree', 'add', '--detach', '--quiet', path, 'troupe/T-1');
    writeFiles(path, { 'leftover.txt': 'not the agent’s\n' });

    const wt = await ensureBranchWorktree({ repo, taskId: 'T-1', agent: 'piece-a' });
    expect(wt.created).toBe(true);
    expect(await sh(path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('troupe/T-1--piece-a');
    expect(existsSync(join(path, 'leftover.txt'))).toBe(false);
  });

  it('a branch that survived its worktree (a crash) is checked out again with its commits, a checkout made ahead or not', async () => {
    const repo = await tmpRepo();
    await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    const first = await ensureBranchWorktree({ repo, taskId: 'T-1', agent: 'piece-a' });
    writeFiles(first.path, { 'a.txt': 'the agent’s work\n' });
    const work = (await commitStage({ path: first.path, message: 'a' }))!;
    await sh(repo, 'worktree', 'remove', first.path);
    keepCheckoutsReady(repo, 'T-1', 'refs/heads/troupe/T-1', 1);
    await waitFor(async () => ((await scratchCheckouts(repo)).length ? true : null));

    const again = await ensureBranchWorktree({ repo, taskId: 'T-1', agent: 'piece-a' });
    expect(again.created).toBe(false);
    expect(await rev(again.path, 'HEAD')).toBe(work);
    expect(read(again.path, 'a.txt')).toBe('the agent’s work\n');
    await releaseVerifyCheckouts(repo, 'T-1');
    expect(await scratchCheckouts(repo)).toEqual([]);
  });

  it('a verifier gets a checkout made ahead, moved to its commit; released with the rest at the end', async () => {
    const repo = await tmpRepo();
    const task = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    keepCheckoutsReady(repo, 'T-1', 'refs/heads/troupe/T-1', 2);
    const ahead = await waitFor(async () => {
      const made = await scratchCheckouts(repo);
      return made.length === 2 ? made : null;
    });
    writeFiles(task.path, { 'done.txt': 'committed\n' });
    const sha = (await commitStage({ path: task.path, message: 'work' }))!;
    // stop making more, so the pool holds only what was made
    keepCheckoutsReady(repo, 'T-1', 'refs/heads/troupe/T-1', 0);

    const seen = await withVerifyCheckout({ repo, taskId: 'T-1', sha }, async (checkout) => {
      expect(await rev(checkout.path, 'HEAD')).toBe(sha);
      expect(read(checkout.path, 'done.txt')).toBe('committed\n');
      return checkout.path;
    });
    expect(ahead).toContain(seen);
    await releaseVerifyCheckouts(repo, 'T-1');
    expect(await scratchCheckouts(repo)).toEqual([]);
    expect(await takeCheckout(repo, 'T-1', 'fresh')).toBeNull();
  });

  it('released while checkouts are still being made: none is left behind', async () => {
    const repo = await tmpRepo();
    await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    keepCheckoutsReady(repo, 'T-1', 'refs/heads/troupe/T-1', 4);
    await releaseVerifyCheckouts(repo, 'T-1');
    expect(await scratchCheckouts(repo)).toEqual([]);
  });
});
