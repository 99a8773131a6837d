import { describe, expect, it } from 'vitest';
import { read, rev, sh, tmpRepo, writeFiles } from '../../test/support/git-repo.js';
import type { WorkspaceSettings } from '../core/pipeline.js';
import { commitStage } from './commit.js';
import { gitWorkspace } from './task-workspace.js';

const settings: WorkspaceSettings = {
  isolation: 'worktree',
  base: 'main',
  merge: 'on_complete',
  branch_prefix: 'troupe/',
  remote: null,
};

/** A task worktree with one recorded stage commit. */
async function taskWithOneStage() {
  const repo = await tmpRepo({ 'README.md': 'hi\n' });
  const ready = await gitWorkspace.prepare('T-1', repo, settings);
  writeFiles(ready.path, { 'one.txt': 'recorded\n' });
  const made = (await gitWorkspace.commit(ready.path, { task: 'T-1', stage: 1, agent: 'dev' }, null))!;
  await gitWorkspace.advance(ready.path, made);
  return { repo, path: ready.path, recorded: made.sha };
}

describe('the merge into base takes only recorded commits', () => {
  it('a stray commit on the task branch is kept as a tag, the branch put back, and only the recorded work merged', async () => {
    const { repo, path, recorded } = await taskWithOneStage();
    // a superseded attempt's commit, which the log never recorded
    writeFiles(path, { 'stray.txt': 'superseded\n' });
    const stray = (await commitStage({ path, message: 'stray' }))!;

    const result = await gitWorkspace.merge(repo, 'T-1', settings, 'main', recorded);
    expect(result).toEqual({
      merged: 'fast-forward',
      sha: recorded,
      stray: { sha: stray, tag: 'troupe/stray/T-1/1' },
    });
    expect(await rev(repo, 'main')).toBe(recorded);
    expect(await rev(repo, 'troupe/T-1')).toBe(recorded);
    expect(await rev(repo, 'troupe/stray/T-1/1')).toBe(stray);
    expect(await sh(repo, 'ls-tree', '--name-only', 'main')).not.toContain('stray.txt');
    // the task's worktree went back with its branch
    expect(await sh(path, 'status', '--porcelain')).toBe('');
    expect(read(path, 'one.txt')).toBe('recorded\n');
  });

  it('a recorded commit not yet on the branch (the process died between the append and the move) is put on it', async () => {
    const { repo, path, recorded } = await taskWithOneStage();
    writeFiles(path, { 'two.txt': 'stage 2\n' });
    const second = (await gitWorkspace.commit(path, { task: 'T-1', stage: 2, agent: 'dev' }, recorded))!;
    expect(await rev(repo, 'troupe/T-1')).toBe(recorded);

    const result = await gitWorkspace.merge(repo, 'T-1', settings, 'main', second.sha);
    expect(result).toEqual({ merged: 'fast-forward', sha: second.sha });
    expect(await sh(repo, 'ls-tree', '--name-only', 'main')).toContain('two.txt');
  });

  it('the recorded tip is merged as it is', async () => {
    const { repo, recorded } = await taskWithOneStage();
    expect(await gitWorkspace.merge(repo, 'T-1', settings, 'main', recorded)).toEqual({
      merged: 'fast-forward',
      sha: recorded,
    });
  });
});

describe("a stage's commit", () => {
  it('is made off the branch: the branch and the worktree index move only on advance', async () => {
    const repo = await tmpRepo({ 'README.md': 'hi\n' });
    const ready = await gitWorkspace.prepare('T-1', repo, settings);
    const start = await rev(repo, 'troupe/T-1');
    writeFiles(ready.path, { 'a.txt': 'a\n' });
    const made = (await gitWorkspace.commit(ready.path, { task: 'T-1', stage: 1, agent: 'dev' }, null))!;
    expect(made.parent).toBe(start);
    expect(await rev(repo, 'troupe/T-1')).toBe(start);
    expect(await sh(ready.path, 'status', '--porcelain')).toBe('?? a.txt');
    await gitWorkspace.advance(ready.path, made);
    expect(await rev(repo, 'troupe/T-1')).toBe(made.sha);
    expect(await sh(ready.path, 'status', '--porcelain')).toBe('');
    // the branch moved meanwhile: the compare-and-swap refuses, nothing changed
    writeFiles(ready.path, { 'b.txt': 'b\n' });
    const late = (await gitWorkspace.commit(ready.path, { task: 'T-1', stage: 2, agent: 'dev' }, made.sha))!;
    await sh(ready.path, 'commit', '--quiet', '--allow-empty', '-m', 'someone else');
    const moved = await rev(repo, 'troupe/T-1');
    await expect(gitWorkspace.advance(ready.path, late)).rejects.toThrow();
    expect(await rev(repo, 'troupe/T-1')).toBe(moved);
  });

  it("an agent's own commit, with nothing left uncommitted, is the stage's commit", async () => {
    const { path, recorded } = await taskWithOneStage();
    writeFiles(path, { 'own.txt': 'the agent committed this\n' });
    await sh(path, 'add', 'own.txt');
    await sh(path, 'commit', '--quiet', '-m', 'agent commit');
    const head = await rev(path, 'HEAD');
    expect(await gitWorkspace.commit(path, { task: 'T-1', stage: 2, agent: 'dev' }, recorded)).toEqual({
      sha: head,
      parent: null,
    });
    expect(await gitWorkspace.commit(path, { task: 'T-1', stage: 3, agent: 'dev' }, head)).toBeNull();
  });
});
