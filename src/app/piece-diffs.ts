import type { TaskState } from '../engine/fold/task-state.js';
import { git } from '../workspace/git.js';

/** What a piece's branch changed from where it started: files, lines added and removed. */
export interface PieceDiff {
  files: number;
  insertions: number;
  deletions: number;
}

/** Pieces' diffs by piece id; a piece without one (no worktree yet, no git) is absent. */
export type PieceDiffs = ReadonlyMap<string, PieceDiff>;

const COMMIT = /^[0-9a-f]{40,64}$/;
const MAX_CACHED = 2000;
/** By `repo start head`: commits do not change, so neither does their diff (the page asks at every event). */
const cache = new Map<string, PieceDiff>();

/**
 * Each piece's diff, from its worktree's start to the last commit the log knows on its branch,
 * read with git in the task's repository (the log records commits, not what they changed). A
 * commit git no longer has (pruned, another machine's) leaves the piece without a diff.
 */
export async function pieceDiffs(state: TaskState): Promise<PieceDiffs> {
  const diffs = new Map<string, PieceDiff>();
  const repo = state.workspace?.repo;
  if (!repo || !state.plan) return diffs;
  await Promise.all(
    [...state.plan.pieces.values()].map(async (piece) => {
      const ws = state.branchWorkspaces.get(piece.lineage);
      if (!ws) return;
      const diff = await diffBetween(repo, ws.start, ws.head);
      if (diff) diffs.set(piece.id, diff);
    }),
  );
  return diffs;
}

async function diffBetween(repo: string, start: string, head: string): Promise<PieceDiff | null> {
  if (start === head) return { files: 0, insertions: 0, deletions: 0 };
  // both come from the log; only commit ids are handed to git
  if (!COMMIT.test(start) || !COMMIT.test(head)) return null;
  const key = `${repo}\0${start}\0${head}`;
  const known = cache.get(key);
  if (known) return known;
  const result = await git(repo, ['diff', '--numstat', '-z', '--no-renames', start, head]);
  if (result.code !== 0) return null;
  const diff = parseNumstat(result.stdout);
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
  cache.set(key, diff);
  return diff;
}

/** `git diff --numstat -z`: `added\tdeleted\tpath\0` per file (`-\t-\t` for a binary file). */
export function parseNumstat(out: string): PieceDiff {
  const diff = { files: 0, insertions: 0, deletions: 0 };
  for (const record of out.split('\0')) {
    const [added, deleted] = record.split('\t');
    if (record === '' || deleted === undefined) continue;
    diff.files++;
    diff.insertions += Number(added) || 0;
    diff.deletions += Number(deleted) || 0;
  }
  return diff;
}
