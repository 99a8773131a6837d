import { StateError } from '../core/errors.js';
import type { WorkspaceSettings } from '../core/pipeline.js';
import { commitStage, stageCommitMessage } from './commit.js';
import { gitOk, isAncestor, resolveCommit } from './git.js';
import { type Conflict, mergeBranches, mergeIntoBase } from './merge.js';
import { findRepo, isDirty } from './repo.js';
import { ensureBranchWorktree, ensureTaskWorktree, taskBranch } from './task-worktree.js';
import { withVerifyCheckout } from './verify-checkout.js';

/**
 * What a task does with git when it works in a worktree (`workspace: {isolation: worktree}`, or
 * the default for a pipeline whose agents edit code, pipeline/isolation.ts): its own
 * worktree and branch, a commit after every stage, and a merge back into base at the end.
 * The executor calls this through its port; every call is safe to repeat.
 */
export interface TaskWorkspace {
  /** The repository `cwd` is in, or null outside git (the default isolation asks). */
  repoOf(cwd: string): Promise<string | null>;
  prepare(
    taskId: string,
    cwd: string,
    settings: WorkspaceSettings,
  ): Promise<{ path: string; branch: string; base: string; repo: string }>;
  commit(path: string, info: { task: string; stage: number; agent: string }): Promise<string | null>;
  /**
   * Puts the worktree at the commit the task's log says it is at (its last stage's commit, or
   * where the branch started): after a crash or a restart, what the log does not know is set
   * aside — a commit is kept as a tag `troupe/archive/<task>-<sha>`, never lost.
   */
  align(path: string, taskId: string, expected: string | null, base: string): Promise<void>;
  /** Runs `fn` in a fresh detached checkout of `sha`, removed afterwards. */
  verifyAt<T>(repo: string, taskId: string, sha: string, fn: (cwd: string) => Promise<T>): Promise<T>;
  merge(
    repo: string,
    taskId: string,
    settings: WorkspaceSettings,
    base: string,
  ): Promise<{ merged: string; sha: string } | { conflict: string[] }>;
  /**
   * A fan-out branch's worktree (`troupe/<task>--<agent>`). With `expected` (the log knows this
   * branch: a resumed run) it is reused and put back at that commit; without, the branch starts
   * afresh at the task branch's tip — an earlier fan-out's tip that is not in the task branch is
   * kept as tag `troupe/archive/<task>--<agent>-<sha12>` first.
   */
  prepareBranch(
    repo: string,
    taskId: string,
    agent: string,
    settings: WorkspaceSettings,
    expected: string | null,
  ): Promise<{ path: string; branch: string; start: string }>;
  /**
   * The join: commits what was left uncommitted in `path` (a conflict resolved by hand) with
   * `leftoverMessage`, then merges `branches` in order (merged ones are skipped; a conflict is
   * aborted and reported). `head`: the worktree's commit afterwards.
   */
  mergeBranches(
    path: string,
    branches: string[],
    leftoverMessage: string,
  ): Promise<{ merged: true; head: string } | { conflict: Conflict; head: string }>;
}

export const gitWorkspace: TaskWorkspace = {
  repoOf: findRepo,
  async prepare(taskId, cwd, settings) {
    const repo = await findRepo(cwd);
    if (!repo) {
      throw new StateError(`workspace isolation needs a git repository, and ${cwd} is not in one`, {
        hint: 'run troupe inside the repository, or set workspace: {isolation: none}',
      });
    }
    const worktree = await ensureTaskWorktree({
      repo,
      taskId,
      ...(settings.base ? { base: settings.base } : {}),
      branchPrefix: settings.branch_prefix,
    });
    return { path: worktree.path, branch: worktree.branch, base: worktree.base, repo };
  },
  commit(path, info) {
    return commitStage({ path, message: stageCommitMessage(info) });
  },
  async align(path, taskId, expected, base) {
    const head = await resolveCommit(path, 'HEAD');
    const target = expected ?? (await gitOk(path, ['merge-base', 'HEAD', base])).trim();
    if (head && head !== target && !(await isAncestor(path, head, target))) {
      await gitOk(path, ['tag', '-f', `troupe/archive/${taskId}-${head.slice(0, 12)}`, head]);
    }
    await gitOk(path, ['reset', '--hard', '--quiet', target]);
    await gitOk(path, ['clean', '-fd', '--quiet']);
  },
  verifyAt(repo, taskId, sha, fn) {
    return withVerifyCheckout({ repo, taskId, sha }, (checkout) => fn(checkout.path));
  },
  async merge(repo, taskId, settings, base) {
    const result = await mergeIntoBase({ repo, taskId, base, branchPrefix: settings.branch_prefix });
    if ('conflict' in result) return { conflict: result.conflict.files };
    return { merged: result.merged, sha: result.sha };
  },
  async prepareBranch(repo, taskId, agent, settings, expected) {
    const worktree = await ensureBranchWorktree({
      repo,
      taskId,
      agent,
      branchPrefix: settings.branch_prefix,
    });
    const name = `${taskId}--${agent}`;
    if (expected) {
      await gitWorkspace.align(worktree.path, name, expected, expected);
      return { path: worktree.path, branch: worktree.branch, start: expected };
    }
    const taskRef = `refs/heads/${taskBranch(taskId, settings.branch_prefix)}`;
    const start = await resolveCommit(repo, taskRef);
    if (!start) throw new StateError(`task ${taskId} has no branch to fan out from (${taskRef})`);
    const head = await resolveCommit(worktree.path, 'HEAD');
    if (head && head !== start && !(await isAncestor(worktree.path, head, start))) {
      await gitOk(worktree.path, ['tag', '-f', `troupe/archive/${name}-${head.slice(0, 12)}`, head]);
    }
    if (head !== start || (await isDirty(worktree.path))) {
      await gitOk(worktree.path, ['reset', '--hard', '--quiet', start]);
      await gitOk(worktree.path, ['clean', '-fd', '--quiet']);
    }
    return { path: worktree.path, branch: worktree.branch, start };
  },
  async mergeBranches(path, branches, leftoverMessage) {
    if (await isDirty(path)) await commitStage({ path, message: leftoverMessage });
    const result =
      branches.length > 0 ? await mergeBranches({ into: path, branches }) : { merged: true as const };
    const head = (await gitOk(path, ['rev-parse', 'HEAD'])).trim();
    return 'conflict' in result ? { conflict: result.conflict, head } : { merged: true, head };
  },
};
