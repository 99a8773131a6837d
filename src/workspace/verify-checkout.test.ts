import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { read, rev, sh, tmpRepo, writeFiles } from '../../test/support/git-repo.js';
import { commitStage } from './commit.js';
import { ensureTaskWorktree } from './task-worktree.js';
import { verifyCheckout, withVerifyCheckout } from './verify-checkout.js';

describe('verify checkouts', () => {
  it("shows the verifier the worker's commit, not the worker's directory, and goes away after", async () => {
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
    expect(existsSync(seen)).toBe(false);
    expect((await sh(repo, 'worktree', 'list')).split('\n')).toHaveLength(2);
    expect(await sh(repo, 'status', '--porcelain')).toBe('');
  });

  it('is removed when the verifier throws; remove() twice is harmless', async () => {
    const repo = await tmpRepo();
    const sha = await rev(repo, 'HEAD');
    let path = '';
    await expect(
      withVerifyCheckout({ repo, taskId: 'T-1', sha }, async (c) => {
        path = c.path;
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(existsSync(path)).toBe(false);
    const c = await verifyCheckout({ repo, taskId: 'T-1', sha });
    await c.remove();
    await c.remove();
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
