import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { commitStage } from '../../workspace/commit.js';
import { MergeConflictError } from '../../workspace/index.js';
import { ensureTaskWorktree } from '../../workspace/task-worktree.js';
import { mergeTask } from './merge.js';
import { testPipeline } from './test.js';
import { capturedIo, SCRIPTED_PAIR, scratchProject, scratchRepo } from './testing.js';

const git = async (cwd: string, ...args: string[]) => String((await execa('git', args, { cwd })).stdout);

/** A completed task of the scripted pair, and its worktree's path. */
async function completedTask(repo: string): Promise<{ id: string; path: string }> {
  const io = capturedIo(repo);
  await testPipeline({ pipeline: 'pair', input: 'a change', param: [], json: true }, io);
  const id = (JSON.parse(io.stdout()) as { id: string }).id;
  return { id, path: (await ensureTaskWorktree({ repo, taskId: id, base: 'main' })).path };
}

describe('troupe merge', () => {
  it("fast-forwards the base to the task's commit; a second merge finds it merged", async () => {
    const repo = await scratchRepo(SCRIPTED_PAIR);
    const { id, path } = await completedTask(repo);
    writeFileSync(join(path, 'new.txt'), 'new\n');
    const sha = (await commitStage({ path, message: 'new file' }))!;
    const first = capturedIo(repo);
    expect(await mergeTask(id, {}, first)).toBe(0);
    expect(first.stdout()).toBe(`troupe/${id} → main: fast-forward (${sha.slice(0, 12)})\n`);
    expect((await git(repo, 'rev-parse', 'main')).trim()).toBe(sha);
    const again = capturedIo(repo);
    await mergeTask(id, { json: true }, again);
    expect(JSON.parse(again.stdout())).toMatchObject({ merged: 'up-to-date', base: 'main', sha });
  });

  it('refuses a conflicting merge and changes nothing', async () => {
    const repo = await scratchRepo(SCRIPTED_PAIR);
    const { id, path } = await completedTask(repo);
    writeFileSync(join(path, 'README.md'), 'theirs\n');
    await commitStage({ path, message: 'theirs' });
    writeFileSync(join(repo, 'README.md'), 'ours\n');
    await git(repo, 'commit', '--quiet', '-am', 'ours');
    const before = await git(repo, 'rev-parse', 'main');
    await expect(mergeTask(id, {}, capturedIo(repo))).rejects.toThrow(MergeConflictError);
    expect(await git(repo, 'rev-parse', 'main')).toBe(before);
  });

  it('needs a git repository', async () => {
    await expect(mergeTask('T-ANY', {}, capturedIo(scratchProject()))).rejects.toThrow(
      /not inside a git repository/,
    );
  });
});
