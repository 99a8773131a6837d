import path from 'node:path';
import type { Permissions } from '../core/pipeline-vocabulary.js';

/**
 * An agent's permissions when the pipeline does not say: it may edit inside a worktree troupe
 * made for the task (`.troupe/worktrees/…`), where nothing of the user's is at stake, and only
 * read anywhere else. `full` is never a default.
 */
export function effectivePermissions(requested: Permissions | null | undefined, cwd: string): Permissions {
  if (requested) return requested;
  return isTroupeWorktree(cwd) ? 'edit' : 'read_only';
}

export function isTroupeWorktree(cwd: string): boolean {
  const parts = path.resolve(cwd).split(path.sep);
  const at = parts.lastIndexOf('.troupe');
  return at >= 0 && parts[at + 1] === 'worktrees' && parts.length > at + 2;
}

/** True when the pipeline's own cli_flags already choose a permission mode. */
export function flagsChoosePermissions(flags: readonly string[], names: readonly string[]): boolean {
  return flags.some((flag) => names.some((name) => flag === name || flag.startsWith(`${name}=`)));
}
