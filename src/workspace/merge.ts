import { randomBytes } from 'node:crypto';
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { NotFoundError, StateError, UsageError } from '../core/errors.js';
import type { Conflict } from '../core/task-workspace.js';
import { DirtyCheckoutError, GitError } from './errors.js';
import { git, gitOk, identityEnv, isAncestor, refExists, resolveCommit } from './git.js';
import { assertTaskId } from './ids.js';
import { ensureExcluded, isDirty, scratchDir, type UncommittedFile, uncommittedFiles } from './repo.js';
import { branchBase, DEFAULT_BRANCH_PREFIX, taskBranch } from './task-worktree.js';
import { worktreeEntries } from './worktree-list.js';

export type MergeBranchesResult = { merged: true } | { conflict: Conflict };

const MERGE_FLAGS = ['--no-ff', '--no-edit', '--no-verify', '--no-gpg-sign'];

/**
 * The join: merges each branch into the worktree's branch, in order, one merge commit each.
 * A branch already merged is skipped, so running it twice is harmless. On a conflict the merge is
 * aborted (the worktree is left clean, nothing overwritten) and the conflicting files reported.
 */
export async function mergeBranches(options: {
  into: string;
  branches: string[];
}): Promise<MergeBranchesResult> {
  const { into, branches } = options;
  if (await isDirty(into)) {
    throw new StateError(`cannot merge into ${into}: it has uncommitted changes`, {
      hint: 'commit the stage first (commitStage)',
    });
  }
  const env = await identityEnv(into);
  const merged: string[] = [];
  for (const branch of branches) {
    if (!(await resolveCommit(into, `refs/heads/${branch}`))) throw new NotFoundError(`no branch ${branch}`);
    if (!(await isAncestor(into, `refs/heads/${branch}`, 'HEAD'))) {
      const files = await tryMerge(into, `refs/heads/${branch}`, `troupe: merge ${branch}`, env);
      if (files) return { conflict: { branch, files, merged } };
    }
    merged.push(branch);
  }
  return { merged: true };
}

export interface MergeIntoBaseOptions {
  repo: string;
  taskId: string;
  /** A local branch; default: the base the task branch was created from. */
  base?: string;
  branchPrefix?: string;
}

export type MergeIntoBaseResult =
  | { merged: 'fast-forward' | 'merge-commit' | 'up-to-date'; base: string; branch: string; sha: string }
  | { conflict: Conflict & { base: string } };

/**
 * Merges the task branch into its base: fast-forward when possible, a merge commit otherwise.
 * The user's checkout is never disturbed: a base not checked out anywhere is moved with
 * update-ref (the merge commit is made in a scratch worktree); a base checked out in a clean
 * checkout is merged there; a base checked out in a dirty checkout is refused.
 */
export async function mergeIntoBase(options: MergeIntoBaseOptions): Promise<MergeIntoBaseResult> {
  assertTaskId(options.taskId);
  const repo = realpathSync(options.repo);
  const branch = taskBranch(options.taskId, options.branchPrefix ?? DEFAULT_BRANCH_PREFIX);
  const tip = await resolveCommit(repo, `refs/heads/${branch}`);
  if (!tip) throw new NotFoundError(`task ${options.taskId} has no branch ${branch}`);
  const base = options.base ?? (await branchBase(repo, branch));
  if (!base)
    throw new UsageError(`no base recorded for ${branch}`, { hint: 'name one with --base <branch>' });
  if (!(await refExists(repo, `refs/heads/${base}`))) {
    throw new UsageError(`base ${JSON.stringify(base)} is not a local branch`, {
      hint: 'merge into a branch: --base <branch>',
    });
  }
  const baseTip = (await resolveCommit(repo, `refs/heads/${base}`))!;
  if (await isAncestor(repo, tip, baseTip)) return { merged: 'up-to-date', base, branch, sha: baseTip };
  // troupe's own files under .troupe/ must not count as the user's uncommitted changes
  await ensureExcluded(repo);
  const message = `troupe: merge ${branch} (task ${options.taskId}) into ${base}`;
  const env = await identityEnv(repo);
  const checkedOut = (await worktreeEntries(repo)).find((e) => e.branch === base && !e.bare);

  if (checkedOut) {
    // moving the branch under a checkout would leave its files behind: merge in that checkout
    const dirty = await blockingChanges(checkedOut.path, baseTip, tip);
    if (dirty.length > 0) throw new DirtyCheckoutError(base, checkedOut.path, dirty, options.taskId);
    const ff = await isAncestor(repo, baseTip, tip);
    if (ff) {
      await gitOk(checkedOut.path, ['merge', '--ff-only', '--quiet', `refs/heads/${branch}`], { env });
    } else {
      const files = await tryMerge(checkedOut.path, `refs/heads/${branch}`, message, env);
      if (files) return { conflict: { branch, files, merged: [], base } };
    }
    const sha = (await gitOk(checkedOut.path, ['rev-parse', 'HEAD'])).trim();
    return { merged: ff ? 'fast-forward' : 'merge-commit', base, branch, sha };
  }

  if (await isAncestor(repo, baseTip, tip)) {
    // compare-and-swap: fails if someone moved the base meanwhile
    await gitOk(repo, ['update-ref', '-m', message, `refs/heads/${base}`, tip, baseTip]);
    return { merged: 'fast-forward', base, branch, sha: tip };
  }
  return withScratchCheckout(repo, options.taskId, baseTip, async (scratch) => {
    const files = await tryMerge(scratch, `refs/heads/${branch}`, message, env);
    if (files) return { conflict: { branch, files, merged: [], base } };
    const sha = (await gitOk(scratch, ['rev-parse', 'HEAD'])).trim();
    await gitOk(repo, ['update-ref', '-m', message, `refs/heads/${base}`, sha, baseTip]);
    return { merged: 'merge-commit', base, branch, sha };
  });
}

/** Runs `fn` in a scratch checkout detached at `commit` (`.troupe/tmp/merge-<task>-<random>`), removed afterwards. */
export async function withScratchCheckout<T>(
  repo: string,
  taskId: string,
  commit: string,
  fn: (scratch: string) => Promise<T>,
): Promise<T> {
  const scratch = join(scratchDir(repo), `merge-${taskId}-${randomBytes(4).toString('hex')}`);
  mkdirSync(scratchDir(repo), { recursive: true });
  await gitOk(repo, ['worktree', 'add', '--detach', '--quiet', scratch, commit]);
  try {
    return await fn(scratch);
  } finally {
    await git(repo, ['worktree', 'remove', '--force', '--force', scratch]);
  }
}

/**
 * The uncommitted changes in a checkout that keep troupe from merging there. Untracked files under
 * `.troupe/` do not count: they are troupe's (`troupe init`'s pipeline and config, not yet
 * committed; its state is ignored anyway) and a merge leaves them alone — unless it would write
 * one of them.
 */
async function blockingChanges(checkout: string, baseTip: string, tip: string): Promise<string[]> {
  const files = await uncommittedFiles(checkout);
  const troupes = (f: UncommittedFile) => f.untracked && f.path.startsWith('.troupe/');
  if (!files.some(troupes)) return files.map((f) => f.path);
  const incoming = (await gitOk(checkout, ['diff', '--name-only', '-z', `${baseTip}...${tip}`]))
    .split('\0')
    .filter(Boolean);
  return files.filter((f) => !troupes(f) || incoming.includes(f.path)).map((f) => f.path);
}

/** Merges `rev` (a ref or commit); on a conflict aborts and returns the conflicting files; null when merged. */
export async function tryMerge(
  cwd: string,
  rev: string,
  message: string,
  env: Record<string, string>,
): Promise<string[] | null> {
  const result = await git(cwd, ['merge', ...MERGE_FLAGS, '--quiet', '-m', message, rev], { env });
  if (result.code === 0) return null;
  const unmerged = await git(cwd, ['diff', '--name-only', '--diff-filter=U', '-z']);
  const files = unmerged.stdout.split('\0').filter(Boolean);
  await git(cwd, ['merge', '--abort']);
  if (files.length === 0) {
    throw new GitError(['merge', rev], result.code, result.stderr || result.stdout);
  }
  return [...new Set(files)].sort();
}
