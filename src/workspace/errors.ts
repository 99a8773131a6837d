import { TroupeError } from '../core/errors.js';

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
