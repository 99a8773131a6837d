import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { read, rev, sh, status, tmpRepo, writeFiles } from '../../test/support/git-repo.js';
import { commitStage, stageCommitMessage } from './commit.js';
import { ensureTaskWorktree } from './task-worktree.js';

describe('commitStage', () => {
  it('commits new, changed and deleted files; null when nothing changed', async () => {
    const repo = await tmpRepo({ 'keep.txt': 'k\n', 'change.txt': 'v1\n', 'gone.txt': 'bye\n' });
    const wt = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    writeFiles(wt.path, { 'change.txt': 'v2\n', 'new/deep.txt': 'new\n' });
    rmSync(join(wt.path, 'gone.txt'));
    const message = stageCommitMessage({
      task: 'T-1',
      stage: 2,
      agent: 'developer',
      summary: 'added deep\nmore',
    });

    const sha = await commitStage({ path: wt.path, message });
    expect(sha).toBe(await rev(wt.path, 'HEAD'));
    expect(await status(wt.path)).toBe('');
    const files = await sh(wt.path, 'show', '--name-status', '--format=', 'HEAD');
    expect(files.split('\n').sort()).toEqual(['A\tnew/deep.txt', 'D\tgone.txt', 'M\tchange.txt']);
    expect((await sh(wt.path, 'log', '-1', '--format=%B')).trim()).toBe(
      'troupe: T-1 stage 2 developer — added deep\n\nTroupe-Task: T-1\nTroupe-Stage: 2\nTroupe-Agent: developer',
    );
    expect(await commitStage({ path: wt.path, message })).toBeNull();
    expect(await rev(wt.path, 'HEAD')).toBe(sha);
  });

  it("puts the commit's staged index in place of the worktree's: it matches the commit, and no copy is left", async () => {
    const repo = await tmpRepo({ 'keep.txt': 'k\n', 'change.txt': 'v1\n', 'gone.txt': 'bye\n' });
    const wt = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    writeFiles(wt.path, { 'change.txt': 'v2\n', 'new.txt': 'new\n' });
    rmSync(join(wt.path, 'gone.txt'));
    const adminDir = await sh(wt.path, 'rev-parse', '--path-format=absolute', '--git-dir');
    await commitStage({ path: wt.path, message: 'm' });
    // the index holds exactly the commit: nothing staged against HEAD, nothing unstaged
    expect(await sh(wt.path, 'diff', '--cached', '--name-only', 'HEAD')).toBe('');
    expect(await sh(wt.path, 'ls-files')).toBe('change.txt\nkeep.txt\nnew.txt');
    expect(await status(wt.path)).toBe('');
    expect(readdirSync(adminDir).filter((f) => f.includes('troupe'))).toEqual([]);
  });

  it('leaves ignored files out', async () => {
    const repo = await tmpRepo({ '.gitignore': 'node_modules/\n' });
    const wt = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    writeFiles(wt.path, { 'node_modules/x/index.js': 'x' });
    expect(await commitStage({ path: wt.path, message: 'm' })).toBeNull();
  });

  describe('without a git identity', () => {
    const saved = { ...process.env };
    afterEach(() => {
      process.env = { ...saved };
    });

    it('commits as troupe <troupe@localhost>', async () => {
      const repo = await tmpRepo();
      await sh(repo, 'config', '--unset', 'user.name');
      await sh(repo, 'config', '--unset', 'user.email');
      process.env.GIT_CONFIG_GLOBAL = join(mkdtempSync(join(tmpdir(), 'troupe-home-')), 'none');
      process.env.GIT_CONFIG_NOSYSTEM = '1';
      for (const key of [
        'GIT_AUTHOR_NAME',
        'GIT_AUTHOR_EMAIL',
        'GIT_COMMITTER_NAME',
        'GIT_COMMITTER_EMAIL',
        'EMAIL',
      ])
        delete process.env[key];
      const wt = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
      writeFiles(wt.path, { 'a.txt': 'a' });
      await commitStage({ path: wt.path, message: 'm' });
      expect(await sh(wt.path, 'log', '-1', '--format=%an <%ae> / %cn <%ce>')).toBe(
        'troupe <troupe@localhost> / troupe <troupe@localhost>',
      );
    });

    it('uses GIT_AUTHOR_* from the environment when set', async () => {
      const repo = await tmpRepo();
      process.env.GIT_AUTHOR_NAME = 'Ada';
      process.env.GIT_AUTHOR_EMAIL = 'ada@example.com';
      const wt = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
      writeFiles(wt.path, { 'a.txt': 'a' });
      await commitStage({ path: wt.path, message: 'm' });
      expect(await sh(wt.path, 'log', '-1', '--format=%an <%ae>')).toBe('Ada <ada@example.com>');
      expect(existsSync(join(wt.path, 'a.txt')) && read(wt.path, 'a.txt')).toBe('a');
    });
  });
});
