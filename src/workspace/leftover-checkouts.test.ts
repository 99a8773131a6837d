import { existsSync, rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { rev, sh, tmpRepo, writeFiles } from '../../test/support/git-repo.js';
import type { WorkspaceSettings } from '../core/pipeline.js';
import { makeDetachedCheckout } from './checkout-pool.js';
import { commitStage } from './commit.js';
import { newScratchPath } from './repo.js';
import { gitWorkspace } from './task-workspace.js';

const SETTINGS: WorkspaceSettings = {
  isolation: 'worktree',
  base: 'main',
  merge: 'on_complete',
  branch_prefix: 'troupe/',
  remote: null,
};

describe('scratch checkouts a killed run left', () => {
  it('go when the task is resumed; a verifier’s commit is kept as a tag; another task’s stay', async () => {
    const repo = await tmpRepo();
    await gitWorkspace.prepare('T-1', repo, SETTINGS);
    const start = await rev(repo, 'HEAD');
    // what kill -9 leaves: checkouts registered, in no process's pool
    const verified = await makeDetachedCheckout(repo, 'T-1', start);
    const committed = await makeDetachedCheckout(repo, 'T-1', start);
    writeFiles(committed, { 'note.txt': 'a verifier committed this\n' });
    const own = (await commitStage({ path: committed, message: 'verifier' }))!;
    const gone = await makeDetachedCheckout(repo, 'T-1', start);
    rmSync(gone, { recursive: true, force: true });
    const merging = newScratchPath(repo, 'merge', 'T-1');
    await sh(repo, 'worktree', 'add', '--detach', '--quiet', merging, start);
    const others = await makeDetachedCheckout(repo, 'T-12', start);

    await gitWorkspace.prepare('T-1', repo, SETTINGS);

    for (const path of [verified, committed, merging]) expect(existsSync(path), path).toBe(false);
    const listed = await sh(repo, 'worktree', 'list', '--porcelain');
    expect(listed).not.toContain('verify-T-1-');
    expect(listed).not.toContain('merge-T-1-');
    expect(listed).toContain(others);
    expect(await rev(repo, `troupe/archive/T-1-verify-${own.slice(0, 12)}`)).toBe(own);
    // the commits they were at are on branches: no tag for those
    expect((await sh(repo, 'tag', '--list')).trim().split('\n')).toHaveLength(1);
  });

  it('a task started afresh looks for none', async () => {
    const repo = await tmpRepo();
    const start = await rev(repo, 'HEAD');
    const left = await makeDetachedCheckout(repo, 'T-1', start);
    // a first run cannot have left anything: it is not searched for (no git work)
    await gitWorkspace.prepare('T-1', repo, SETTINGS);
    expect(existsSync(left)).toBe(true);
  });
});
