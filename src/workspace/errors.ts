import { StateError, TroupeError } from '../core/errors.js';

/** A git command troupe ran failed for a reason troupe does not handle itself; carries git's words. */
export class GitError extends TroupeError {
  readonly code = 'git_failed';
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number,
    readonly stderr: string,
    hint?: string,
  ) {
    super(
      `git ${args.join(' ')} failed (exit ${exitCode})${stderr ? `: ${stderr.trim().split('\n')[0]}` : ''}`,
      hint ? { hint } : undefined,
    );
  }
}

/** A merge stopped on conflicting files; nothing was overwritten and the merge was aborted. */
export class MergeConflictError extends TroupeError {
  readonly code = 'merge_conflict';
  constructor(
    readonly branch: string,
    readonly into: string,
    readonly files: readonly string[],
    hint?: string,
  ) {
    super(`merging ${branch} into ${into} conflicts in ${files.join(', ')}`, hint ? { hint } : undefined);
  }
}

/** A task's worktree starts from a commit, and the repository (or its base branch) has none yet. */
export class NoCommitError extends TroupeError {
  readonly code = 'repo_without_commits';
  constructor(
    readonly repo: string,
    readonly branch: string,
  ) {
    // the fix is in the message too: a task that fails on it reports the message alone
    super(
      `${branch} in ${repo} has no commit yet, and a task's worktree starts from one: make a first commit, then run again`,
      {
        hint: 'commit what is there (git add -A && git commit -m "first commit"), or start from nothing (git commit --allow-empty -m "first commit")',
      },
    );
  }
}

/** The base is checked out where the merge would overwrite uncommitted changes or untracked files. */
export class DirtyCheckoutError extends StateError {
  constructor(
    readonly base: string,
    readonly path: string,
    readonly files: readonly string[],
    taskId: string,
  ) {
    super(
      `${base} is checked out in ${path}, where the merge would overwrite uncommitted changes to ${someOf(files)}; troupe will not touch them`,
      { hint: `commit or stash them there, then run \`troupe merge ${taskId}\`` },
    );
  }
}

/** `a, b, c and 4 more`. */
function someOf(files: readonly string[], shown = 3): string {
  if (files.length <= shown + 1) return files.join(', ');
  return `${files.slice(0, shown).join(', ')} and ${files.length - shown} more`;
}
