import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { read, rev, sh, tmpRepo, writeFiles } from '../../test/support/git-repo.js';
import { commitStage } from './commit.js';
import { ensureTaskWorktree } from './task-worktree.js';
import { releaseVerifyCheckouts, verifyCheckout, withVerifyCheckout } from './verify-checkout.js';

describe('verify checkouts', () => {
  it("shows the verifier the worker's commit, not the worker's directory, and goes away once released", async () => {
    const repo = await tmpRepo();
    const wt = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    writeFiles(wt.path, { 'done.txt': 'committed\n' });
    const sha = (await commitStage({ path: wt.path, message: 'work' }))!;
    writeFiles(wt.path, { 'done.txt': 'edited after the commit\n', 'stray.txt': 'not committed\n' });

    let seen = '';
    const result = await withVerifyCheckout({ repo, taskId: 'T-1', sha }, async (checkout) => {
      seen = checkout.path;
      expect(checkout.path.startsWith(join(repo, '.troupe/tmp/verify-T-1-'))).toBe(true);
      expect(await rev(checkout.path, 'HEAD')).toBe(sha);
      expect(read(checkout.path, 'done.txt')).toBe('committed\n');
      expect(existsSync(join(checkout.path, 'stray.txt'))).toBe(false);
      return 'approved';
    });
    expect(result).toBe('approved');
    // kept for the task's next verification, until the run releases it
    expect(existsSync(seen)).toBe(true);
    await releaseVerifyCheckouts(repo, 'T-1');
    expect(existsSync(seen)).toBe(false);
    expect((await sh(repo, 'worktree', 'list')).split('\n')).toHaveLength(2);
    expect(await sh(repo, 'status', '--porcelain')).toBe('');
  });

  it('is done with when the verifier throws; remove() twice is harmless', async () => {
    const repo = await tmpRepo();
    const sha = await rev(repo, 'HEAD');
    let path = '';
    await expect(
      withVerifyCheckout({ repo, taskId: 'T-1', sha }, async (c) => {
        path = c.path;
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const c = await verifyCheckout({ repo, taskId: 'T-1', sha });
    expect(c.path).toBe(path);
    await c.remove();
    await c.remove();
    // removed twice, kept once: two verifications at once get two checkouts
    const [a, b] = await Promise.all([1, 2].map(() => verifyCheckout({ repo, taskId: 'T-1', sha })));
    expect(a!.path).toBe(path);
    expect(b!.path).not.toBe(path);
    await Promise.all([a!.remove(), b!.remove()]);
    await releaseVerifyCheckouts(repo, 'T-1');
    expect(existsSync(path)).toBe(false);
    expect((await sh(repo, 'worktree', 'list')).split('\n')).toHaveLength(1);
  });

  it("a checkout used again holds exactly the next commit: nothing of the last verifier's is left", async () => {
    const repo = await tmpRepo();
    const wt = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    writeFiles(wt.path, { 'a.txt': 'one\n', '.gitignore': 'build/\n' });
    const first = (await commitStage({ path: wt.path, message: 'one' }))!;
    writeFiles(wt.path, { 'a.txt': 'two\n', 'b.txt': 'new\n' });
    const second = (await commitStage({ path: wt.path, message: 'two' }))!;
    const used = await withVerifyCheckout({ repo, taskId: 'T-1', sha: first }, async (c) => {
      writeFiles(c.path, { 'a.txt': 'edited by the verifier\n', 'left.txt': 'x', 'build/out.js': 'y' });
      return c.path;
    });
    await withVerifyCheckout({ repo, taskId: 'T-1', sha: second }, async (c) => {
      expect(c.path).toBe(used);
      expect(await rev(c.path, 'HEAD')).toBe(second);
      expect(read(c.path, 'a.txt')).toBe('two\n');
      expect(read(c.path, 'b.txt')).toBe('new\n');
      expect(existsSync(join(c.path, 'left.txt'))).toBe(false);
      expect(existsSync(join(c.path, 'build'))).toBe(false);
      expect(await sh(c.path, 'status', '--porcelain', '--ignored')).toBe('');
    });
    // another task never gets this task's checkout
    await withVerifyCheckout({ repo, taskId: 'T-2', sha: second }, async (c) => {
      expect(c.path).not.toBe(used);
    });
    await releaseVerifyCheckouts(repo, 'T-1');
    await releaseVerifyCheckouts(repo, 'T-2');
  });

  it('a commit the verifier made is kept as a tag, not lost', async () => {
    const repo = await tmpRepo();
    const sha = await rev(repo, 'HEAD');
    const made = await withVerifyCheckout({ repo, taskId: 'T-1', sha }, async (c) => {
      writeFiles(c.path, { 'oops.txt': 'x' });
      return commitStage({ path: c.path, message: 'verifier commit' });
    });
    expect(await rev(repo, `troupe/archive/T-1-verify-${sha.slice(0, 12)}`)).toBe(made);
  });
});
