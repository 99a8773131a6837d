import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { read, rev, sh, status, tmpRepo, writeFiles } from '../../test/support/git-repo.js';
import { commitStage } from './commit.js';
import { mergeBranches, mergeIntoBase } from './merge.js';
import { ensureBranchWorktree, ensureTaskWorktree } from './task-worktree.js';

async function fanOut(files: { a: Record<string, string>; b: Record<string, string> }) {
  const repo = await tmpRepo({ 'shared.txt': 'line 1\nline 2\nline 3\n', 'README.md': 'hi\n' });
  const task = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
  const a = await ensureBranchWorktree({ repo, taskId: 'T-1', agent: 'a' });
  const b = await ensureBranchWorktree({ repo, taskId: 'T-1', agent: 'b' });
  writeFiles(a.path, files.a);
  writeFiles(b.path, files.b);
  await commitStage({ path: a.path, message: 'a' });
  await commitStage({ path: b.path, message: 'b' });
  return { repo, task, a, b };
}

describe('mergeBranches (the join)', () => {
  it('merges two branches that edited different files', async () => {
    const { task, a, b } = await fanOut({ a: { 'a.txt': 'from a\n' }, b: { 'b.txt': 'from b\n' } });
    expect(await mergeBranches({ into: task.path, branches: [a.branch, b.branch] })).toEqual({
      merged: true,
    });
    expect(read(task.path, 'a.txt')).toBe('from a\n');
    expect(read(task.path, 'b.txt')).toBe('from b\n');
    expect(await status(task.path)).toBe('');
    // twice is harmless: nothing new
    const head = await rev(task.path, 'HEAD');
    expect(await mergeBranches({ into: task.path, branches: [a.branch, b.branch] })).toEqual({
      merged: true,
    });
    expect(await rev(task.path, 'HEAD')).toBe(head);
  });

  it('the same lines: a conflict with the files, aborted, nothing overwritten', async () => {
    const { task, a, b } = await fanOut({
      a: { 'shared.txt': 'line 1\nA says\nline 3\n', 'a-only.txt': 'a\n' },
      b: { 'shared.txt': 'line 1\nB says\nline 3\n' },
    });
    const result = await mergeBranches({ into: task.path, branches: [a.branch, b.branch] });
    expect(result).toEqual({ conflict: { branch: b.branch, files: ['shared.txt'], merged: [a.branch] } });
    expect(await status(task.path)).toBe('');
    expect(existsSync(join(task.path, '.git'))).toBe(true);
    expect((await sh(task.path, 'rev-parse', '--git-path', 'MERGE_HEAD')).trim()).toBeTruthy();
    expect(
      existsSync(join(task.path, (await sh(task.path, 'rev-parse', '--git-path', 'MERGE_HEAD')).trim())),
    ).toBe(false);
    expect(read(task.path, 'shared.txt')).toBe('line 1\nA says\nline 3\n');
    expect(read(b.path, 'shared.txt')).toBe('line 1\nB says\nline 3\n');
    expect(await sh(task.path, 'show', `${b.branch}:shared.txt`)).toBe('line 1\nB says\nline 3');
  });

  it('refuses to merge into a worktree with uncommitted changes', async () => {
    const { task, a } = await fanOut({ a: { 'a.txt': 'a\n' }, b: { 'b.txt': 'b\n' } });
    writeFiles(task.path, { 'wip.txt': 'wip\n' });
    await expect(mergeBranches({ into: task.path, branches: [a.branch] })).rejects.toThrow(
      /uncommitted changes/,
    );
  });
});

async function taskWithCommit(repo: string, file = 'feature.txt', content = 'feature\n') {
  const task = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
  writeFiles(task.path, { [file]: content });
  const sha = await commitStage({ path: task.path, message: 'feature' });
  return { task, sha: sha! };
}

describe('mergeIntoBase', () => {
  it('fast-forwards a base nobody has checked out with update-ref; the dirty main checkout is untouched', async () => {
    const repo = await tmpRepo({ 'README.md': 'hi\n' });
    await sh(repo, 'switch', '-q', '-c', 'work');
    writeFiles(repo, { 'README.md': 'local edit\n', 'untracked.txt': 'u\n' });
    const before = await status(repo);
    const { sha } = await taskWithCommit(repo);

    expect(await mergeIntoBase({ repo, taskId: 'T-1' })).toEqual({
      merged: 'fast-forward',
      base: 'main',
      branch: 'troupe/T-1',
      sha,
    });
    expect(await rev(repo, 'main')).toBe(sha);
    expect(await status(repo)).toBe(before);
    expect(read(repo, 'README.md')).toBe('local edit\n');
    expect(await mergeIntoBase({ repo, taskId: 'T-1' })).toMatchObject({ merged: 'up-to-date' });
  });

  it('makes a merge commit in a scratch worktree when base moved on, and removes the scratch', async () => {
    const repo = await tmpRepo();
    const { sha } = await taskWithCommit(repo);
    await sh(repo, 'switch', '-q', '-c', 'work');
    await sh(repo, 'commit', '--allow-empty', '-q', '-m', 'x');
    await sh(repo, 'switch', '-q', 'main');
    writeFiles(repo, { 'other.txt': 'o\n' });
    await sh(repo, 'add', 'other.txt');
    await sh(repo, 'commit', '-q', '-m', 'main moved');
    const mainBefore = await rev(repo, 'main');
    await sh(repo, 'switch', '-q', 'work');

    const result = await mergeIntoBase({ repo, taskId: 'T-1' });
    expect(result).toMatchObject({ merged: 'merge-commit', base: 'main' });
    const parents = (await sh(repo, 'rev-list', '--parents', '-n1', 'main')).split(' ').slice(1);
    expect(parents).toEqual([mainBefore, sha]);
    expect(await sh(repo, 'show', 'main:feature.txt')).toBe('feature');
    expect(readdirSync(join(repo, '.troupe/tmp'))).toEqual([]);
    expect((await sh(repo, 'worktree', 'list')).split('\n')).toHaveLength(2);
  });

  it('merges in the main checkout when base is checked out there and clean', async () => {
    const repo = await tmpRepo();
    const { sha } = await taskWithCommit(repo);
    expect(await mergeIntoBase({ repo, taskId: 'T-1' })).toMatchObject({ merged: 'fast-forward' });
    expect(await rev(repo, 'HEAD')).toBe(sha);
    expect(read(repo, 'feature.txt')).toBe('feature\n');
    expect(await status(repo)).toBe('');
  });

  it("merges beside the user's untracked files and edits the task does not touch, keeping them exactly", async () => {
    const repo = await tmpRepo({ 'README.md': 'hi\n' });
    const { sha } = await taskWithCommit(repo);
    writeFiles(repo, { 'notes.txt': 'my notes\n', 'README.md': 'my edit\n' });
    const before = await status(repo);
    expect(await mergeIntoBase({ repo, taskId: 'T-1' })).toMatchObject({ merged: 'fast-forward', sha });
    expect(read(repo, 'feature.txt')).toBe('feature\n');
    expect([read(repo, 'notes.txt'), read(repo, 'README.md')]).toEqual(['my notes\n', 'my edit\n']);
    expect(await status(repo)).toBe(before);
  });

  it('with a merge commit too: made aside, then the checkout moves to it around the user’s edits', async () => {
    const repo = await tmpRepo({ 'README.md': 'hi\n' });
    await taskWithCommit(repo);
    writeFiles(repo, { 'other.txt': 'on main\n' });
    await sh(repo, 'add', '-A');
    await sh(repo, 'commit', '-qm', 'main moves on');
    writeFiles(repo, { 'notes.txt': 'my notes\n', 'README.md': 'my edit\n' });
    await sh(repo, 'add', 'README.md'); // staged, too
    const before = await status(repo);
    const result = await mergeIntoBase({ repo, taskId: 'T-1' });
    expect(result).toMatchObject({ merged: 'merge-commit' });
    expect(await rev(repo, 'main')).toBe('sha' in result ? result.sha : '');
    expect(read(repo, 'feature.txt')).toBe('feature\n');
    expect([read(repo, 'notes.txt'), read(repo, 'README.md')]).toEqual(['my notes\n', 'my edit\n']);
    expect(await status(repo)).toBe(before);
    expect(readdirSync(join(repo, '.troupe/tmp'))).toEqual([]);
  });

  it('refuses, naming it and changing nothing, when the task adds a file the user has untracked there', async () => {
    const repo = await tmpRepo();
    await taskWithCommit(repo, 'notes.txt', 'from the task\n');
    writeFiles(repo, { 'notes.txt': 'my notes\n' });
    const head = await rev(repo, 'main');
    await expect(mergeIntoBase({ repo, taskId: 'T-1' })).rejects.toMatchObject({
      name: 'DirtyCheckoutError',
      files: ['notes.txt'],
      message: expect.stringMatching(
        /^main is checked out in .*, where the merge would overwrite uncommitted changes to notes.txt; troupe will not touch them$/,
      ),
      hint: 'commit or stash them there, then run `troupe merge T-1`',
    });
    expect(await rev(repo, 'main')).toBe(head);
    expect(read(repo, 'notes.txt')).toBe('my notes\n');
  });

  it('refuses, naming it, when the user changed a tracked file the task changes too', async () => {
    const repo = await tmpRepo({ 'README.md': 'hi\n' });
    await taskWithCommit(repo, 'README.md', 'the task says hi\n');
    writeFiles(repo, { 'README.md': 'mine\n', 'notes.txt': 'unrelated\n' });
    const head = await rev(repo, 'main');
    await expect(mergeIntoBase({ repo, taskId: 'T-1' })).rejects.toMatchObject({ files: ['README.md'] });
    expect(await rev(repo, 'main')).toBe(head);
    expect([read(repo, 'README.md'), read(repo, 'notes.txt')]).toEqual(['mine\n', 'unrelated\n']);
  });

  it("leaves to git what troupe's list misses, and names what git names: an untracked file where the task makes a folder", async () => {
    const repo = await tmpRepo();
    await taskWithCommit(repo, 'src/x.txt', 'x\n');
    writeFiles(repo, { src: 'a file of mine\n' });
    const head = await rev(repo, 'main');
    await expect(mergeIntoBase({ repo, taskId: 'T-1' })).rejects.toMatchObject({
      name: 'DirtyCheckoutError',
      files: ['src'],
    });
    expect(await rev(repo, 'main')).toBe(head);
    expect(read(repo, 'src')).toBe('a file of mine\n');
  });

  it('names the uncommitted files it refused for: a few, then how many more', async () => {
    const repo = await tmpRepo();
    const task = await ensureTaskWorktree({ repo, taskId: 'T-1', base: 'main' });
    const names = ['README.md', 'a.txt', 'b.txt', 'c.txt', 'd.txt'];
    writeFiles(task.path, Object.fromEntries(names.map((name) => [name, 'from the task\n'])));
    await commitStage({ path: task.path, message: 'feature' });
    writeFiles(repo, Object.fromEntries(names.map((name) => [name, 'mine\n'])));
    await expect(mergeIntoBase({ repo, taskId: 'T-1' })).rejects.toThrow(
      /uncommitted changes to README.md, a.txt, b.txt and 2 more; troupe will not touch them$/,
    );
  });

  it("troupe's untracked files under .troupe/ (troupe init's pipeline) do not hold the merge", async () => {
    const repo = await tmpRepo();
    const { sha } = await taskWithCommit(repo);
    writeFiles(repo, {
      '.troupe/.gitignore': '/*\n!/pipelines/\n',
      '.troupe/pipelines/default.yaml': 'agents: []\n',
      '.troupe/config.yaml': 'default_pipeline: default\n',
    });
    const before = await status(repo);
    expect(before).toContain('?? .troupe/');
    expect(await mergeIntoBase({ repo, taskId: 'T-1' })).toMatchObject({ merged: 'fast-forward', sha });
    expect(await status(repo)).toBe(before);
  });

  it('an untracked file under .troupe/ that the merge would write still holds it', async () => {
    const repo = await tmpRepo();
    await taskWithCommit(repo, '.troupe/pipelines/default.yaml', 'from the task\n');
    writeFiles(repo, { '.troupe/pipelines/default.yaml': 'mine\n' });
    await expect(mergeIntoBase({ repo, taskId: 'T-1' })).rejects.toThrow(
      /uncommitted changes to .troupe\/pipelines\/default.yaml; troupe will not touch them/,
    );
    expect(read(repo, '.troupe/pipelines/default.yaml')).toBe('mine\n');
  });

  it('a conflict with base is reported and base stays where it was', async () => {
    const repo = await tmpRepo({ 'README.md': 'hi\n' });
    await taskWithCommit(repo, 'README.md', 'task version\n');
    writeFiles(repo, { 'README.md': 'main version\n' });
    await sh(repo, 'commit', '-qam', 'main edit');
    const head = await rev(repo, 'main');
    await sh(repo, 'switch', '-q', '--detach');
    const result = await mergeIntoBase({ repo, taskId: 'T-1' });
    expect(result).toEqual({
      conflict: { branch: 'troupe/T-1', files: ['README.md'], merged: [], base: 'main' },
    });
    expect(await rev(repo, 'main')).toBe(head);
    expect(readdirSync(join(repo, '.troupe/tmp'))).toEqual([]);
  });

  it("a conflict with a checked-out base happens aside: the user's checkout and files stay as they were", async () => {
    const repo = await tmpRepo({ 'README.md': 'hi\n', 'other.txt': 'other\n' });
    await taskWithCommit(repo, 'README.md', 'task version\n');
    writeFiles(repo, { 'README.md': 'main version\n' });
    await sh(repo, 'commit', '-qam', 'main edit');
    writeFiles(repo, { 'notes.txt': 'my notes\n', 'other.txt': 'my edit\n' });
    const [head, before] = [await rev(repo, 'main'), await status(repo)];
    expect(await mergeIntoBase({ repo, taskId: 'T-1' })).toEqual({
      conflict: { branch: 'troupe/T-1', files: ['README.md'], merged: [], base: 'main' },
    });
    expect(await rev(repo, 'main')).toBe(head);
    expect(await status(repo)).toBe(before);
    expect([read(repo, 'README.md'), read(repo, 'notes.txt'), read(repo, 'other.txt')]).toEqual([
      'main version\n',
      'my notes\n',
      'my edit\n',
    ]);
    expect(readdirSync(join(repo, '.troupe/tmp'))).toEqual([]);
  });

  it('a base that is not a local branch is a usage error', async () => {
    const repo = await tmpRepo();
    await taskWithCommit(repo);
    await expect(mergeIntoBase({ repo, taskId: 'T-1', base: 'v1' })).rejects.toThrow(/not a local branch/);
  });
});
