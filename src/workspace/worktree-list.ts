import { realpathSync } from 'node:fs';
import { gitOk } from './git.js';

/** One entry of `git worktree list --porcelain`. */
export interface WorktreeEntry {
  path: string;
  head: string | null;
  /** Short branch name, or null when detached. */
  branch: string | null;
  bare: boolean;
  /** The lock reason ('' when locked without one), or null. */
  locked: string | null;
  /** Its directory is gone; `git worktree prune` would drop it. */
  prunable: boolean;
}

export async function worktreeEntries(repo: string): Promise<WorktreeEntry[]> {
  const out = await gitOk(repo, ['worktree', 'list', '--porcelain']);
  const entries: WorktreeEntry[] = [];
  let current: WorktreeEntry | null = null;
  for (const line of out.split('\n')) {
    if (line.startsWith('worktree ')) {
      current = { path: line.slice(9), head: null, branch: null, bare: false, locked: null, prunable: false };
      entries.push(current);
      continue;
    }
    if (!current) continue;
    if (line.startsWith('HEAD ')) current.head = line.slice(5);
    else if (line.startsWith('branch ')) current.branch = line.slice(7).replace(/^refs\/heads\//, '');
    else if (line === 'bare') current.bare = true;
    else if (line === 'locked' || line.startsWith('locked ')) current.locked = line.slice(7);
    else if (line === 'prunable' || line.startsWith('prunable ')) current.prunable = true;
  }
  return entries;
}

/** Path comparison that survives symlinked temp dirs (/var → /private/var). */
export function samePath(a: string, b: string): boolean {
  return canonical(a) === canonical(b);
}

export function canonical(path: string): string {
  const trimmed = path.replace(/\/+$/, '');
  try {
    return realpathSync(trimmed);
  } catch {
    return trimmed;
  }
}
