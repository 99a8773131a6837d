import { realpathSync } from 'node:fs';
import { StateError } from '../core/errors.js';
import type { TaskWorkspace } from '../core/task-workspace.js';
import { keepCheckoutsReady } from './checkout-pool.js';
import { advanceBranch, buildCommit, buildOnHead, stageCommitMessage } from './commit.js';
import { git, gitOk, isAncestor, resolveCommit } from './git.js';
import { removeLeftoverCheckouts } from './leftover-checkouts.js';
import { buildMerges, mergeIntoBase, readMergeStart } from './merge.js';
import { pruneWorktrees } from './prune.js';
import { agentsOwnCommits, restoreRecordedTip } from './recorded-tip.js';
import { findRepo, isDirty } from './repo.js';
import { ensureBranchWorktree, ensureTaskWorktree, taskBranch } from './task-worktree.js';
import { releaseVerifyCheckouts, withVerifyCheckout } from './verify-checkout.js';

/** The git implementation of the TaskWorkspace port (core/task-workspace.ts). */
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
    // a resumed task: what a killed run of it left in scratch checkouts goes
    if (!worktree.created) await removeLeftoverCheckouts(repo, taskId);
    return { path: worktree.path, branch: worktree.branch, base: worktree.base, repo };
  },
  async commit(path, info, recorded) {
    const { head, built } = await buildOnHead({ path, message: stageCommitMessage(info) });
    const moved = recorded !== null && head !== recorded;
    const own = moved && (await agentsOwnCommits(path, recorded, head));
    if (moved && !own) {
      // a commit the log does not know under the worktree: not the agent's, never recorded.
      // Alone it is set aside by the merge (tag troupe/stray/...); the stage's work on top of it
      // cannot be told apart from it, so it is refused
      if (built)
        throw new StateError(
          `${path} is at ${head}, a commit of no recorded attempt: the stage's work is not committed on it`,
          {
            hint: 'resume the task: its worktree is put back at the last recorded commit',
          },
        );
      return null;
    }
    if (built) return built;
    // nothing left uncommitted: the agent may have committed its work itself
    return own ? { sha: head, parent: null } : null;
  },
  async advance(path, commit) {
    if (commit.parent) await advanceBranch(path, { sha: commit.sha, parent: commit.parent });
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
  async showFiles(path, rev, files, maxBytes) {
    const shown: Record<string, string | null> = {};
    for (const file of files) {
      const result = await git(path, ['show', `${rev}:${file}`]);
      const text = result.code === 0 ? result.stdout : null;
      shown[file] =
        text !== null && text.length > maxBytes
          ? `${text.slice(0, maxBytes)}\n… (cut at ${maxBytes} bytes)`
          : text;
    }
    return shown;
  },
  async changedFiles(path, from, to) {
    const out = await gitOk(path, ['diff', '--name-only', '-z', '--no-renames', from, to]);
    return out.split('\0').filter((f) => f !== '');
  },
  verifyAt(repo, taskId, sha, fn) {
    return withVerifyCheckout({ repo, taskId, sha }, (checkout) => fn(checkout.path));
  },
  keepCheckoutsReady(repo, taskId, branch, count) {
    keepCheckoutsReady(realpathSync(repo), taskId, `refs/heads/${branch}`, count);
  },
  releaseCheckouts: releaseVerifyCheckouts,
  async merge(repo, taskId, settings, base, recorded) {
    const branch = taskBranch(taskId, settings.branch_prefix);
    const stray = await restoreRecordedTip({ repo, taskId, branch, base, recorded });
    const result = await mergeIntoBase({ repo, taskId, base, branchPrefix: settings.branch_prefix });
    const aside = stray ? { stray } : {};
    if ('conflict' in result) return { conflict: result.conflict.files, ...aside };
    return { merged: result.merged, sha: result.sha, ...aside };
  },
  async prepareBranch(repo, taskId, agent, settings, expected, from) {
    const worktree = await ensureBranchWorktree({
      repo,
      taskId,
      agent,
      branchPrefix: settings.branch_prefix,
      ...(from ? { startAt: from } : {}),
    });
    const name = `${taskId}--${agent}`;
    if (expected) {
      await gitWorkspace.align(worktree.path, name, expected, expected);
      return { path: worktree.path, branch: worktree.branch, start: expected };
    }
    // just made from the task branch: at its start, with nothing else in it
    if (worktree.start) return { path: worktree.path, branch: worktree.branch, start: worktree.start };
    const taskRef = `refs/heads/${taskBranch(taskId, settings.branch_prefix)}`;
    const start = from ?? (await resolveCommit(repo, taskRef));
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
    const read = await readMergeStart(path, branches);
    const from = read.head;
    const leftover = leftoverMessage === null ? null : await buildCommit({ path, message: leftoverMessage });
    const built = await buildMerges({ path, start: leftover?.sha ?? from, branches, read });
    return 'conflict' in built
      ? { conflict: built.conflict, head: built.head, from }
      : { merged: true, head: built.head, from };
  },
  async tidy(repo, taskId) {
    const actions = await pruneWorktrees(repo, { endedTasks: new Set([taskId]), only: taskId });
    return actions.filter((a) => a.action === 'remove').map((a) => a.branch ?? a.path ?? a.kind);
  },
};
