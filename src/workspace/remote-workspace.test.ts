import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { originAndClones, read, rev, sh, writeFiles } from '../../test/support/git-repo.js';
import type { WorkspaceSettings } from '../core/pipeline.js';
import type { TaskWorkspace } from '../core/task-workspace.js';
import { fileMergeLock } from './merge-lock.js';
import { PushRejectedError } from './remote-repo.js';
import { remoteWorkspace } from './remote-workspace.js';
import { gitWorkspace } from './task-workspace.js';

/**
 * `workspace: {remote: origin}` with real git: a bare repository is the remote, and separate
 * clones stand in for the machines of separate workers.
 */

const settings = (remote = 'origin'): WorkspaceSettings => ({
  isolation: 'worktree',
  base: 'main',
  merge: 'on_complete',
  branch_prefix: 'troupe/',
  remote,
});

const worker = (root: string) =>
  remoteWorkspace({ root, mergeLock: fileMergeLock(join(root, '.troupe', 'locks')) });
const onOrigin = (origin: string, ref: string) => rev(origin, ref);
const stage = (n: number, agent = 'dev') => ({ task: 'T-1', stage: n, agent });

/** A stage's commit, put on its branch (as the executor does once the stage is recorded). */
async function commitOn(ws: TaskWorkspace, path: string, info: ReturnType<typeof stage>) {
  const made = await ws.commit(path, info, null);
  if (!made) return null;
  await ws.advance(path, made);
  return made.sha;
}

/** Stage 1 of T-1 on machine A, pushed. */
async function firstStageOn(a: string) {
  const ws = worker(a);
  const ready = await ws.prepare('T-1', a, settings());
  writeFiles(ready.path, { 'one.txt': 'stage 1\n' });
  const sha = (await commitOn(ws, ready.path, stage(1)))!;
  return { ws, ready, sha };
}

describe('remote workspace: worktrees across machines', () => {
  it('a stage on machine A is pushed, and the next stage on machine B continues from it', async () => {
    const { origin, clones } = await originAndClones(2);
    const [a, b] = clones as [string, string];
    const first = await firstStageOn(a);
    expect(first.ready.path).toBe(join(a, '.troupe', 'worktrees', 'T-1'));
    expect(await onOrigin(origin, 'troupe/T-1')).toBe(first.sha);

    // B is handed the directory recorded on A; it works in its own clone
    const wsB = worker(b);
    const there = await wsB.prepare('T-1', a, settings());
    expect(there.path).toBe(join(b, '.troupe', 'worktrees', 'T-1'));
    await wsB.align(there.path, 'T-1', first.sha, 'main');
    expect(read(there.path, 'one.txt')).toBe('stage 1\n');
    writeFiles(there.path, { 'two.txt': 'stage 2\n' });
    const second = (await commitOn(wsB, there.path, stage(2)))!;
    expect(await onOrigin(origin, 'troupe/T-1')).toBe(second);
    expect(await rev(origin, `${second}^`)).toBe(first.sha);

    // A, still at stage 1, may not push over B's stage: refused, never forced
    writeFiles(first.ready.path, { 'stale.txt': 'late\n' });
    await expect(commitOn(first.ws, first.ready.path, stage(2))).rejects.toThrow(PushRejectedError);
    expect(await onOrigin(origin, 'troupe/T-1')).toBe(second);

    // and A's next run starts where the remote is
    const again = await first.ws.prepare('T-1', a, settings());
    await first.ws.align(again.path, 'T-1', second, 'main');
    expect(read(again.path, 'two.txt')).toBe('stage 2\n');
    expect(existsSync(join(again.path, 'stale.txt'))).toBe(false);
    expect(await onOrigin(origin, 'troupe/T-1')).toBe(second);
  });

  it('a crash after the commit, before the push: the stage runs again from the pushed tip', async () => {
    const { origin, clones } = await originAndClones(1);
    const [a] = clones as [string];
    const first = await firstStageOn(a);
    // stage 2 committed here, and the process died before pushing (and before the log knew)
    writeFiles(first.ready.path, { 'two.txt': 'attempt 1\n' });
    const lost = (await commitOn(gitWorkspace, first.ready.path, stage(2)))!;
    expect(await onOrigin(origin, 'troupe/T-1')).toBe(first.sha);

    const ws = worker(a);
    const ready = await ws.prepare('T-1', a, settings());
    await ws.align(ready.path, 'T-1', first.sha, 'main');
    expect(await rev(ready.path, 'HEAD')).toBe(first.sha);
    expect(await rev(a, `troupe/archive/T-1-${lost.slice(0, 12)}`)).toBe(lost);
    writeFiles(ready.path, { 'two.txt': 'attempt 2\n' });
    const second = (await commitOn(ws, ready.path, stage(2)))!;
    expect(await onOrigin(origin, 'troupe/T-1')).toBe(second);
    expect(await rev(origin, `${second}^`)).toBe(first.sha);
  });

  it('a crash after the push, before the log knew: the next worker sets it aside on the remote and continues', async () => {
    const { origin, clones } = await originAndClones(2);
    const [a, b] = clones as [string, string];
    const first = await firstStageOn(a);
    writeFiles(first.ready.path, { 'two.txt': 'unrecorded\n' });
    const unrecorded = (await commitOn(first.ws, first.ready.path, stage(2)))!;
    expect(await onOrigin(origin, 'troupe/T-1')).toBe(unrecorded);

    const wsB = worker(b);
    const ready = await wsB.prepare('T-1', a, settings());
    await wsB.align(ready.path, 'T-1', first.sha, 'main');
    expect(await onOrigin(origin, 'troupe/T-1')).toBe(first.sha);
    expect(await onOrigin(origin, `troupe/archive/T-1-${unrecorded.slice(0, 12)}`)).toBe(unrecorded);
    writeFiles(ready.path, { 'two.txt': 'recorded\n' });
    const second = (await commitOn(wsB, ready.path, stage(2)))!;
    expect(await rev(origin, `${second}^`)).toBe(first.sha);
  });

  it('fan-out branches on different machines join on a third', async () => {
    const { origin, clones } = await originAndClones(3);
    const [a, b, c] = clones as [string, string, string];
    const first = await firstStageOn(a);

    const left = await first.ws.prepareBranch(a, 'T-1', 'left', settings(), null);
    expect(left.start).toBe(first.sha);
    writeFiles(left.path, { 'left.txt': 'L\n' });
    const leftSha = (await commitOn(first.ws, left.path, stage(2, 'left')))!;
    expect(await onOrigin(origin, 'troupe/T-1--left')).toBe(leftSha);

    const wsB = worker(b);
    await wsB.prepare('T-1', a, settings());
    const right = await wsB.prepareBranch(a, 'T-1', 'right', settings(), null);
    expect(right.start).toBe(first.sha);
    writeFiles(right.path, { 'right.txt': 'R\n' });
    const rightSha = (await commitOn(wsB, right.path, stage(3, 'right')))!;

    const wsC = worker(c);
    const task = await wsC.prepare('T-1', a, settings());
    await wsC.align(task.path, 'T-1', first.sha, 'main');
    const joined = await wsC.mergeBranches(task.path, ['troupe/T-1--left', 'troupe/T-1--right'], 'leftover');
    expect(joined).toEqual({ merged: true, head: expect.any(String), from: first.sha });
    // made on no branch: the task branch moves (and is pushed) once the join is recorded
    expect(await onOrigin(origin, 'troupe/T-1')).toBe(first.sha);
    await wsC.advance(task.path, { sha: joined.head, parent: joined.from });
    expect(read(task.path, 'left.txt')).toBe('L\n');
    expect(read(task.path, 'right.txt')).toBe('R\n');
    expect(await onOrigin(origin, 'troupe/T-1')).toBe(joined.head);
    for (const sha of [leftSha, rightSha]) {
      await sh(origin, 'merge-base', '--is-ancestor', sha, 'troupe/T-1');
    }
    // a branch resumed on another machine is put back at its recorded commit
    const leftOnB = await wsB.prepareBranch(a, 'T-1', 'left', settings(), leftSha);
    expect(read(leftOnB.path, 'left.txt')).toBe('L\n');
  });

  it('three machines racing to merge the task into base make exactly one merge', async () => {
    const { origin, clones } = await originAndClones(3);
    const [a, b, c] = clones as [string, string, string];
    const first = await firstStageOn(a);
    // base moved on meanwhile, so the merge is a merge commit, made by whoever wins
    writeFiles(c, { 'other.txt': 'someone else\n' });
    await sh(c, 'add', '-A');
    await sh(c, 'commit', '-qm', 'other work');
    await sh(c, 'push', '-q', 'origin', 'main');
    const wsB = worker(b);
    await wsB.prepare('T-1', a, settings());

    const wsC = worker(c);
    const results = await Promise.all([
      first.ws.merge(a, 'T-1', settings(), 'main', null),
      wsB.merge(b, 'T-1', settings(), 'main', null),
      wsC.merge(c, 'T-1', settings(), 'main', null),
    ]);
    const tip = await onOrigin(origin, 'main');
    const merges = (await sh(origin, 'rev-list', '--merges', 'main')).split('\n').filter(Boolean);
    expect(merges).toEqual([tip]);
    expect(await rev(origin, `${tip}^2`)).toBe(first.sha);
    for (const result of results) expect(result).toEqual({ merged: expect.any(String), sha: tip });
    expect(results.map((r) => ('merged' in r ? r.merged : 'conflict'))).toContain('merge-commit');
    // and again: nothing doubled
    expect(await wsB.merge(b, 'T-1', settings(), 'main', null)).toEqual({ merged: 'up-to-date', sha: tip });
  });

  it('tasks of one worker fetch and push in one repository at the same time', async () => {
    const { origin, clones } = await originAndClones(1);
    const ws = worker(clones[0]!);
    const ids = ['T-1', 'T-2', 'T-3', 'T-4'];
    const shas = await Promise.all(
      ids.map(async (id) => {
        const ready = await ws.prepare(id, clones[0]!, settings());
        writeFiles(ready.path, { [`${id}.txt`]: `${id}\n` });
        const sha = await commitOn(ws, ready.path, { task: id, stage: 1, agent: 'dev' });
        await ws.merge(ready.repo, id, settings(), 'main', null);
        return sha;
      }),
    );
    for (const [i, id] of ids.entries()) {
      expect(await onOrigin(origin, `troupe/${id}`)).toBe(shas[i]);
      await sh(origin, 'merge-base', '--is-ancestor', shas[i]!, 'main');
    }
  });

  it('a conflict with the remote base is reported and nothing is pushed', async () => {
    const { origin, clones } = await originAndClones(2);
    const [a, b] = clones as [string, string];
    const ws = worker(a);
    const ready = await ws.prepare('T-1', a, settings());
    writeFiles(ready.path, { 'README.md': 'the task says\n' });
    await commitOn(ws, ready.path, stage(1));
    writeFiles(b, { 'README.md': 'someone else says\n' });
    await sh(b, 'commit', '-qam', 'other work');
    await sh(b, 'push', '-q', 'origin', 'main');
    const before = await onOrigin(origin, 'main');
    expect(await ws.merge(a, 'T-1', settings(), 'main', null)).toEqual({ conflict: ['README.md'] });
    expect(await onOrigin(origin, 'main')).toBe(before);
    expect(readdirSync(join(a, '.troupe', 'tmp'))).toEqual([]);
  });

  it('a project directory that is no checkout works in a clone of the URL it caches', async () => {
    const { origin, clones } = await originAndClones(1);
    const dir = join(clones[0]!, '..', 'not-a-checkout');
    mkdirSync(dir);
    const ws = worker(dir);
    const ready = await ws.prepare('T-1', dir, settings(origin));
    expect(ready.path.startsWith(join(dir, '.troupe', 'remotes'))).toBe(true);
    writeFiles(ready.path, { 'one.txt': '1\n' });
    const sha = await commitOn(ws, ready.path, stage(1));
    expect(await onOrigin(origin, 'troupe/T-1')).toBe(sha);
    expect(await ws.merge(ready.repo, 'T-1', settings(origin), 'main', null)).toEqual({
      merged: 'fast-forward',
      sha,
    });
    expect(await onOrigin(origin, 'main')).toBe(sha);
    // a remote name means nothing outside a checkout
    await expect(ws.prepare('T-2', dir, settings('origin'))).rejects.toThrow(
      /workspace.remote origin is not a remote of .*not-a-checkout/,
    );
  });
});
