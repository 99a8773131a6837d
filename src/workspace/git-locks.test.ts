import { existsSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { sh, tmpRepo } from '../../test/support/git-repo.js';
import { appendBranchSection } from './config-file.js';
import { gitOkRetryingLock } from './git.js';
import { lockNamedIn, STALE_CONFIG_LOCK_MS } from './git-locks.js';

/** What a writer killed with -9 leaves: `config.lock`, holding the config it meant to write. */
function plantLock(repo: string, ageMs: number): string {
  const lock = join(repo, '.git', 'config.lock');
  writeFileSync(lock, readFileSync(join(repo, '.git', 'config')));
  const at = (Date.now() - ageMs) / 1000;
  utimesSync(lock, at, at);
  return lock;
}

describe('a config lock a killed writer left', () => {
  it('is cleared by the next git config write troupe makes', async () => {
    const repo = await tmpRepo();
    const lock = plantLock(repo, STALE_CONFIG_LOCK_MS + 60_000);
    await gitOkRetryingLock(repo, ['config', 'branch.troupe/T-1.troupeTask', 'T-1']);
    expect(await sh(repo, 'config', '--get', 'branch.troupe/T-1.troupeTask')).toBe('T-1');
    expect(existsSync(lock)).toBe(false);
  });

  it("is cleared by troupe's own one-write branch section", async () => {
    const repo = await tmpRepo();
    const lock = plantLock(repo, STALE_CONFIG_LOCK_MS + 60_000);
    expect(await appendBranchSection(join(repo, '.git'), 'troupe/T-2', [['troupeTask', 'T-2']])).toBe(true);
    expect(await sh(repo, 'config', '--get', 'branch.troupe/T-2.troupeTask')).toBe('T-2');
    expect(existsSync(lock)).toBe(false);
  });

  it('a lock being held is waited for, not taken: the write lands once its writer lets go', async () => {
    const repo = await tmpRepo();
    const lock = plantLock(repo, 0);
    const held = statSync(lock).ino;
    let landed = false;
    const write = appendBranchSection(join(repo, '.git'), 'troupe/T-3', [['troupeTask', 'T-3']]).then(() => {
      landed = true;
    });
    const viaGit = gitOkRetryingLock(repo, ['config', 'branch.troupe/T-4.troupeTask', 'T-4']);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(landed).toBe(false);
    expect(statSync(lock).ino).toBe(held);
    rmSync(lock);
    await Promise.all([write, viaGit]);
    expect(await sh(repo, 'config', '--get', 'branch.troupe/T-3.troupeTask')).toBe('T-3');
    expect(await sh(repo, 'config', '--get', 'branch.troupe/T-4.troupeTask')).toBe('T-4');
  });
});

describe('lockNamedIn', () => {
  it("finds the lock in git's own words, from a linked worktree and for the index", async () => {
    const repo = await tmpRepo();
    await sh(repo, 'worktree', 'add', '--quiet', '-b', 'side', join(repo, '..', 'side'));
    const lock = plantLock(repo, 0);
    const fromRepo = await execa('git', ['config', 'a.b', 'c'], { cwd: repo, reject: false });
    expect(lockNamedIn(fromRepo.stderr, repo)).toBe(lock);
    const side = join(repo, '..', 'side');
    const fromWorktree = await execa('git', ['config', 'a.b', 'c'], { cwd: side, reject: false });
    expect(lockNamedIn(fromWorktree.stderr, side)).toBe(lock);
    rmSync(lock);
    const index = join(repo, '.git', 'index.lock');
    writeFileSync(index, '');
    const checkout = await execa('git', ['checkout', '--quiet', '--detach', 'HEAD'], {
      cwd: repo,
      reject: false,
    });
    expect(lockNamedIn(checkout.stderr, repo)).toBe(index);
    expect(lockNamedIn('fatal: not a git repository', repo)).toBeNull();
  });
});
