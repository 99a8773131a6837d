import { realpathSync } from 'node:fs';
import { NotFoundError, StateError, UsageError } from '../core/errors.js';
import type { Conflict } from '../core/task-workspace.js';
import { advanceBranch } from './commit.js';
import { DirtyCheckoutError, GitError } from './errors.js';
import { git, gitOk, identityEnv, isAncestor, refExists, resolveCommit } from './git.js';
import { assertTaskId } from './ids.js';
import { ensureExcluded, isDirty, newScratchPath, uncommittedFiles } from './repo.js';
import { branchBase, DEFAULT_BRANCH_PREFIX, taskBranch } from './task-worktree.js';
import { worktreeEntries } from './worktree-list.js';

export type MergeBranchesResult = { merged: true } | { conflict: Conflict };

const MERGE_FLAGS = ['--no-ff', '--no-edit', '--no-verify', '--no-gpg-sign'];

/** A join's merges, made on no branch: `head` is the last merge commit (`start` when none). */
export type BuiltMerges = { head: string } & ({ merged: true } | { conflict: Conflict });

/**
 * The join's merges, computed on no branch (`git merge-tree`, then `commit-tree`): each branch in
 * order, one merge commit each, on `start`; a branch already in is skipped, so it is harmless
 * twice. Neither a ref, the index nor a file moves: the merges count only once the join is
 * recorded under the task's lease, and then `advanceBranch` puts them on the branch. On a conflict
 * the merges before it are kept and the conflicting files reported.
 */
export async function buildMerges(options: {
  path: string;
  start: string;
  branches: string[];
  /** What `readMergeStart` read, when the caller did. */
  read?: MergeStart;
}): Promise<BuiltMerges> {
  const { path, branches, read } = options;
  const [env, tips] = await Promise.all([
    identityEnv(path, read?.commonDir),
    read ? read.tips : readMergeStart(path, branches).then((r) => r.tips),
  ]);
  const merged: string[] = [];
  let head = options.start;
  for (const [i, branch] of branches.entries()) {
    const tip = tips[i]!;
    const args = ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', head, tip];
    // asked side by side: the merge is only made when the branch is not in yet
    const [merging, result] = await Promise.all([
      isAncestor(path, tip, head).then((a) => !a),
      git(path, args),
    ]);
    if (merging) {
      const [tree, ...files] = result.stdout.split('\0').filter(Boolean);
      if (result.code === 1 && files.length > 0) {
        return { conflict: { branch, files: [...new Set(files)].sort(), merged }, head };
      }
      if (result.code !== 0 || !tree) throw new GitError(args, result.code, result.stderr || result.stdout);
      const message = `troupe: merge ${branch}`;
      head = (
        await gitOk(path, ['commit-tree', '--no-gpg-sign', '-p', head, '-p', tip, '-m', message, tree], {
          env,
        })
      ).trim();
    }
    merged.push(branch);
  }
  return { merged: true, head };
}

/** Where a join's merges start, read by one git process (a plan merges several at once). */
export interface MergeStart {
  /** The worktree's HEAD. */
  head: string;
  /** The branches' tips, in order. */
  tips: string[];
  /** The repository's common dir (its identity is read once for all its worktrees). */
  commonDir: string;
}

export async function readMergeStart(path: string, branches: string[]): Promise<MergeStart> {
  // each starts with refs/heads/, so none reads as an option
  const revs = ['HEAD^{commit}', ...branches.map((branch) => `refs/heads/${branch}^{commit}`)];
  const read = await git(path, ['rev-parse', '--path-format=absolute', '--git-common-dir', ...revs]);
  const [commonDir, head, ...tips] = read.stdout.split('\n');
  if (read.code === 0 && commonDir && head && tips.length === branches.length)
    return { head, tips, commonDir };
  // one of them is missing: say which
  for (const branch of branches)
    if (!(await resolveCommit(path, `refs/heads/${branch}`))) throw new NotFoundError(`no branch ${branch}`);
  throw new GitError(['rev-parse', ...revs], read.code, read.stderr);
}

/**
 * The join made at once, in a worktree without uncommitted changes: the merges (`buildMerges`)
 * from its HEAD, then its branch moved to them. On a conflict the worktree is left clean, at the
 * merges before it.
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
  const start = (await resolveCommit(into, 'HEAD'))!;
  const built = await buildMerges({ path: into, start, branches });
  if (built.head !== start) await advanceBranch(into, { sha: built.head, parent: start });
  return 'conflict' in built ? { conflict: built.conflict } : { merged: true };
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
 * Merges the task branch into its base: fast-forward when possible, a merge commit otherwise
 * (made in a scratch worktree). The user's work is never disturbed: a base not checked out
 * anywhere is moved with update-ref; a base checked out is moved there by a fast-forward to the
 * result, beside the user's uncommitted changes and untracked files, as git does it — refused,
 * naming them, when the merge would change or overwrite any of them.
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
    // moving the branch under a checkout would leave its files behind: move it in that checkout
    const dirty = await blockingChanges(checkedOut.path, baseTip, tip);
    if (dirty.length > 0) throw new DirtyCheckoutError(base, checkedOut.path, dirty, options.taskId);
    const ff = await isAncestor(repo, baseTip, tip);
    // a conflict stays in the scratch checkout: `merge --abort` in the user's could not promise
    // to keep their uncommitted changes
    const made = ff
      ? { sha: tip }
      : await withScratchCheckout(repo, options.taskId, baseTip, (scratch) =>
          mergeCommit(scratch, branch, message, env),
        );
    if ('files' in made) return { conflict: { branch, files: made.files, merged: [], base } };
    await fastForwardCheckout(checkedOut.path, made.sha, env, { base, taskId: options.taskId });
    return { merged: ff ? 'fast-forward' : 'merge-commit', base, branch, sha: made.sha };
  }

  if (await isAncestor(repo, baseTip, tip)) {
    // compare-and-swap: fails if someone moved the base meanwhile
    await gitOk(repo, ['update-ref', '-m', message, `refs/heads/${base}`, tip, baseTip]);
    return { merged: 'fast-forward', base, branch, sha: tip };
  }
  return withScratchCheckout(repo, options.taskId, baseTip, async (scratch) => {
    const made = await mergeCommit(scratch, branch, message, env);
    if ('files' in made) return { conflict: { branch, files: made.files, merged: [], base } };
    await gitOk(repo, ['update-ref', '-m', message, `refs/heads/${base}`, made.sha, baseTip]);
    return { merged: 'merge-commit', base, branch, sha: made.sha };
  });
}

/** The merge commit of the task branch, made in `scratch`; or the files it conflicts in. */
async function mergeCommit(
  scratch: string,
  branch: string,
  message: string,
  env: Record<string, string>,
): Promise<{ sha: string } | { files: string[] }> {
  const files = await tryMerge(scratch, `refs/heads/${branch}`, message, env);
  if (files) return { files };
  return { sha: (await gitOk(scratch, ['rev-parse', 'HEAD'])).trim() };
}

/**
 * Fast-forwards the checkout to `sha`. git keeps the uncommitted changes and untracked files the
 * move does not touch, and refuses (changing nothing) when it would overwrite one: its list of
 * them becomes a DirtyCheckoutError.
 */
async function fastForwardCheckout(
  checkout: string,
  sha: string,
  env: Record<string, string>,
  about: { base: string; taskId: string },
): Promise<void> {
  const args = ['merge', '--ff-only', '--quiet', sha];
  const result = await git(checkout, args, { env });
  if (result.code === 0) return;
  const files = result.stderr
    .split('\n')
    .filter((line) => line.startsWith('\t'))
    .map((line) => line.slice(1));
  if (files.length === 0) throw new GitError(args, result.code, result.stderr || result.stdout);
  throw new DirtyCheckoutError(about.base, checkout, files, about.taskId);
}

/** Runs `fn` in a scratch checkout detached at `commit` (`.troupe/tmp/merge-<task>-<random>`), removed afterwards. */
export async function withScratchCheckout<T>(
  repo: string,
  taskId: string,
  commit: string,
  fn: (scratch: string) => Promise<T>,
): Promise<T> {
  const scratch = newScratchPath(repo, 'merge', taskId);
  await gitOk(repo, ['worktree', 'add', '--detach', '--quiet', scratch, commit]);
  try {
    return await fn(scratch);
  } finally {
    await git(repo, ['worktree', 'remove', '--force', '--force', scratch]);
  }
}

/**
 * The user's uncommitted changes and untracked files in a checkout that the merge would change or
 * overwrite: those the task branch changed since it left the base. The others (notes, build
 * output, an edit elsewhere) stay as they are beside the merge.
 */
async function blockingChanges(checkout: string, baseTip: string, tip: string): Promise<string[]> {
  const files = await uncommittedFiles(checkout);
  if (files.length === 0) return [];
  const incoming = new Set(
    (await gitOk(checkout, ['diff', '--name-only', '--no-renames', '-z', `${baseTip}...${tip}`]))
      .split('\0')
      .filter(Boolean),
  );
  return files.filter((f) => incoming.has(f.path)).map((f) => f.path);
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
