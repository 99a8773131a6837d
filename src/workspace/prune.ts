import { realpathSync } from 'node:fs';
import { commitStage } from './commit.js';
import { git, gitOk, resolveCommit } from './git.js';
import { listWorktrees, type WorktreeInfo } from './worktree-status.js';

export interface PruneOptions {
  /** Say what would happen; change nothing. */
  dryRun?: boolean;
  /** Also remove what is not safe to remove: unmerged work is committed and kept as a tag first. */
  force?: boolean;
  /** Tasks that have ended (completed, failed, cancelled). */
  endedTasks: ReadonlySet<string>;
  /**
   * Why a task is running right now (a live process holds its lease), or null. Asked for each
   * worktree just before it is removed; a running task's worktrees are kept even with `force`.
   */
  runningTask?: (task: string) => string | null;
  /** Only this task's worktrees and branches. */
  only?: string;
  /**
   * False: with `force`, unmerged commits go without a `troupe/archive/` tag (a throwaway run's,
   * such as `troupe test`'s). Default true.
   */
  archive?: boolean;
}

export interface PruneAction {
  task: string;
  agent: string | null;
  kind: WorktreeInfo['kind'];
  path: string | null;
  branch: string | null;
  action: 'remove' | 'keep';
  /** Why it is kept, or (with force) what made it unsafe. */
  reasons: string[];
  /** The tag its commits are kept under, when removed unmerged. */
  archivedAs: string | null;
  /** The commit made of its uncommitted changes before removing it (force only). */
  committed: string | null;
  /** Kept because its task is running (force does not remove it). */
  running: boolean;
}

/**
 * Removes worktrees (and their branches) whose task ended and whose commits are merged into
 * base or pushed. Anything else is kept, with the reasons, unless `force` — and a running task's
 * worktrees are kept even then. With `force` no commit is lost: uncommitted changes are committed, and an unmerged branch is kept as tag
 * `troupe/archive/<name>` before it is deleted. Fan-out branches go before task branches, so a
 * fan-out merged into its task branch counts as merged.
 */
export async function pruneWorktrees(repo: string, options: PruneOptions): Promise<PruneAction[]> {
  const root = realpathSync(repo);
  // fan-outs first: their base is the task branch, which may go after them
  const rank = (i: WorktreeInfo) =>
    i.agent !== null ? 0 : i.kind === 'verify' || i.kind === 'merge' ? 1 : 2;
  const items = (await listWorktrees(root, options.only)).sort((a, b) => rank(a) - rank(b));
  const actions: PruneAction[] = [];
  for (const item of items) {
    // removing a running task's worktree pulls its directory out from under the agent
    const running = options.endedTasks.has(item.task) ? null : (options.runningTask?.(item.task) ?? null);
    const reasons = unsafeReasons(item, options.endedTasks, running);
    const action: PruneAction = {
      task: item.task,
      agent: item.agent,
      kind: item.kind,
      path: item.path,
      branch: item.branch,
      action: running === null && (reasons.length === 0 || options.force) ? 'remove' : 'keep',
      reasons,
      archivedAs: null,
      committed: null,
      running: running !== null,
    };
    actions.push(action);
    if (action.action === 'keep') continue;
    const keepCommits = options.archive !== false && (item.dirty || !(item.merged || item.pushed));
    if (options.dryRun) {
      if (keepCommits && item.head) action.archivedAs = await archiveName(root, item, item.head);
      continue;
    }
    if (keepCommits && item.dirty && item.path) {
      action.committed = await commitStage({
        path: item.path,
        message: `troupe: ${item.task} uncommitted changes kept by prune --force`,
      });
    }
    const tip = await tipOf(root, item);
    if (keepCommits && tip) {
      action.archivedAs = await archiveName(root, item, tip);
      if ((await resolveCommit(root, `refs/tags/${action.archivedAs}`)) !== tip) {
        await gitOk(root, ['tag', action.archivedAs, tip]);
      }
    }
    if (item.path) {
      if (item.missing) await gitOk(root, ['worktree', 'prune']);
      else await gitOk(root, ['worktree', 'remove', '--force', '--force', item.path]);
    }
    if (item.branch) await gitOk(root, ['branch', '-D', '--quiet', item.branch]);
  }
  if (!options.dryRun) await git(root, ['worktree', 'prune']);
  return actions;
}

async function tipOf(repo: string, item: WorktreeInfo): Promise<string | null> {
  const rev = item.branch ? `refs/heads/${item.branch}` : null;
  if (rev) return resolveCommit(repo, rev);
  if (item.path && !item.missing) return resolveCommit(item.path, 'HEAD');
  return item.head;
}

function unsafeReasons(item: WorktreeInfo, ended: ReadonlySet<string>, running: string | null): string[] {
  const reasons: string[] = [];
  if (running !== null) reasons.push(running);
  else if (!ended.has(item.task)) reasons.push('task has not ended');
  if (item.dirty) reasons.push('uncommitted changes');
  if (!item.merged && !item.pushed) {
    reasons.push(
      item.base ? `commits not merged into ${item.base} and not pushed` : 'commits not merged and not pushed',
    );
  }
  return reasons;
}

/**
 * `troupe/archive/<task>[--<agent>]`, or `-2`, `-3`… when that tag names another commit (a tag
 * already naming this one is reused, so a prune interrupted and run again makes no second tag).
 */
async function archiveName(repo: string, item: WorktreeInfo, sha: string): Promise<string> {
  const suffix = item.kind === 'verify' || item.kind === 'merge' ? `-${item.kind}` : '';
  const name = `troupe/archive/${item.task}${item.agent ? `--${item.agent}` : ''}${suffix}`;
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? name : `${name}-${n}`;
    const existing = await resolveCommit(repo, `refs/tags/${candidate}`);
    if (existing === null || existing === sha) return candidate;
  }
}
