import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { git, heldByRef, resolveCommit } from './git.js';
import { isDirty, parseScratchName, scratchDir, worktreesDir } from './repo.js';
import { parseWorktreeName, troupeBranches } from './task-worktree.js';
import { canonical, worktreeEntries } from './worktree-list.js';

export interface WorktreeInfo {
  task: string;
  /** The fan-out agent, or null for the task's own worktree. */
  agent: string | null;
  /** task / fan-out worktree, a branch troupe made whose worktree is gone, or a scratch checkout. */
  kind: 'task' | 'fan-out' | 'branch' | 'verify' | 'merge';
  /** The checkout, or null for a branch without one. */
  path: string | null;
  branch: string | null;
  head: string | null;
  base: string | null;
  /** Commits on the branch not in base, and in base not on the branch (null without a base). */
  ahead: number | null;
  behind: number | null;
  dirty: boolean;
  /** Every commit of it is in base. */
  merged: boolean;
  /** Every commit of it is on a remote (reachable from a remote-tracking branch). */
  pushed: boolean;
  /** Registered, but its directory is gone. */
  missing: boolean;
}

/**
 * Everything troupe keeps in the repository: its worktrees, its branches, its scratch checkouts
 * (`only`: those of one task).
 */
export async function listWorktrees(repo: string, only?: string): Promise<WorktreeInfo[]> {
  const root = realpathSync(repo);
  const wtDir = canonical(worktreesDir(root));
  const tmpDir = canonical(scratchDir(root));
  const [entries, branches] = await Promise.all([worktreeEntries(root), troupeBranches(root)]);
  const found: Array<Promise<WorktreeInfo>> = [];
  const seen = new Set<string>();
  const wanted = (task: string) => only === undefined || task === only;
  for (const entry of entries) {
    const parent = canonical(dirname(entry.path));
    const name = basename(entry.path);
    if (parent === wtDir) {
      const parsed = parseWorktreeName(name);
      const meta = entry.branch ? branches.get(entry.branch) : undefined;
      if (entry.branch) seen.add(entry.branch);
      if (!wanted(meta?.task ?? parsed.task)) continue;
      found.push(
        describe(root, {
          task: meta?.task ?? parsed.task,
          agent: meta?.agent ?? parsed.agent,
          kind: parsed.agent === null ? 'task' : 'fan-out',
          path: entry.path,
          branch: entry.branch,
          head: entry.head,
          base: meta?.base ?? null,
          missing: entry.prunable || !existsSync(entry.path),
        }),
      );
    } else if (parent === tmpDir) {
      const scratch = parseScratchName(name);
      if (!scratch || !wanted(scratch.task)) continue;
      found.push(
        describe(root, {
          task: scratch.task,
          agent: null,
          kind: scratch.kind,
          path: entry.path,
          branch: null,
          head: entry.head,
          base: null,
          missing: entry.prunable || !existsSync(entry.path),
        }),
      );
    }
  }
  for (const [branch, meta] of branches) {
    if (seen.has(branch) || !meta.task || !wanted(meta.task)) continue;
    const head = await resolveCommit(root, `refs/heads/${branch}`);
    if (!head) continue;
    found.push(
      describe(root, {
        task: meta.task,
        agent: meta.agent ?? null,
        kind: 'branch',
        path: null,
        branch,
        head,
        base: meta.base ?? null,
        missing: false,
      }),
    );
  }
  const all = await Promise.all(found);
  return all.sort((a, b) => a.task.localeCompare(b.task) || (a.path ?? '').localeCompare(b.path ?? ''));
}

type Known = Pick<WorktreeInfo, 'task' | 'agent' | 'kind' | 'path' | 'branch' | 'head' | 'base' | 'missing'>;

async function describe(repo: string, known: Known): Promise<WorktreeInfo> {
  const tip = known.branch ? `refs/heads/${known.branch}` : known.head;
  const dirty = known.path && !known.missing ? await isDirty(known.path) : false;
  let ahead: number | null = null;
  let behind: number | null = null;
  let merged = false;
  const baseSha = known.base ? await resolveCommit(repo, known.base) : null;
  if (tip && baseSha) {
    const counts = await git(repo, ['rev-list', '--left-right', '--count', `${baseSha}...${tip}`]);
    if (counts.code === 0) {
      const [left, right] = counts.stdout.trim().split(/\s+/).map(Number);
      behind = left ?? null;
      ahead = right ?? null;
      merged = ahead === 0;
    }
  } else if (tip && (known.kind === 'verify' || known.kind === 'merge')) {
    // a scratch checkout holds nothing of its own unless someone committed there
    merged = await heldByRef(repo, tip);
  }
  const pushed = tip
    ? (await git(repo, ['for-each-ref', '--count=1', '--contains', tip, 'refs/remotes'])).stdout.trim()
        .length > 0
    : false;
  return { ...known, ahead, behind, dirty, merged, pushed };
}
