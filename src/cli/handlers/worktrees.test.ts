import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../core/errors.js';
import { commitStage } from '../../workspace/commit.js';
import { ensureTaskWorktree } from '../../workspace/task-worktree.js';
import { testPipeline } from './test.js';
import { capturedIo, SCRIPTED_PAIR, scratchProject, scratchRepo } from './testing.js';
import { worktrees } from './worktrees.js';

/** A completed task of the scripted pair whose worktree holds one commit of `file`. */
async function taskWithCommit(repo: string, file: string): Promise<string> {
  const io = capturedIo(repo);
  await testPipeline({ pipeline: 'pair', input: `make ${file}`, param: [], json: true }, io);
  const id = (JSON.parse(io.stdout()) as { id: string }).id;
  const worktree = await ensureTaskWorktree({ repo, taskId: id, base: 'main' });
  writeFileSync(join(worktree.path, file), `${file}\n`);
  await commitStage({ path: worktree.path, message: file });
  return id;
}

interface Row {
  task: string;
  status: string;
  branch: string;
  ahead: number;
  merged: boolean;
}

describe('troupe worktrees', () => {
  it("lists a task's worktree with its status, and a dry run of prune keeps the unmerged one", async () => {
    const repo = await scratchRepo(SCRIPTED_PAIR);
    const id = await taskWithCommit(repo, 'a.txt');
    const list = capturedIo(repo);
    expect(await worktrees('list', { json: true }, list)).toBe(0);
    expect(
      (JSON.parse(list.stdout()) as Row[]).map((r) => [r.task, r.status, r.branch, r.ahead, r.merged]),
    ).toEqual([[id, 'completed', `troupe/${id}`, 1, false]]);
    const table = capturedIo(repo);
    await worktrees('list', {}, table);
    expect(table.stdout().split('\n')[0]).toMatch(/^TASK +STATUS +KIND +BRANCH +AHEAD\/BEHIND +STATE +PATH$/);
    expect(table.stdout()).toContain(`.troupe/worktrees/${id}`);

    const dry = capturedIo(repo);
    expect(await worktrees('prune', { dryRun: true }, dry)).toBe(0);
    expect(dry.stdout()).toMatch(new RegExp(`^kept {10}${id} `, 'm'));
    expect(dry.stdout()).toMatch(/1 kept; `troupe worktrees prune --force` removes them too/);
    const forced = capturedIo(repo);
    await worktrees('prune', { force: true, json: true }, forced);
    const pruned = JSON.parse(forced.stdout()) as {
      actions: Array<{ action: string; archivedAs: string | null }>;
    };
    expect(pruned.actions).toMatchObject([{ archivedAs: `troupe/archive/${id}` }]);
    const after = capturedIo(repo);
    await worktrees('list', {}, after);
    expect(after.stdout()).toBe('no troupe worktrees\n');
  });

  it('refuses an unknown action and a directory that is not a git repository', async () => {
    const io = capturedIo(scratchProject());
    await expect(worktrees('clean', {}, io)).rejects.toThrow(UsageError);
    await expect(worktrees('list', {}, io)).rejects.toThrow(/not inside a git repository/);
  });
});
