import type { StrayCommit } from '../core/task-workspace.js';
import { git, gitOk, isAncestor, resolveCommit } from './git.js';
import { worktreeEntries } from './worktree-list.js';

/**
 * The task branch holds only what the task's log recorded: before it is merged, a tip that is not
 * the log's last commit of the branch (a superseded attempt's commit, made after its lease was
 * lost) is kept as tag `troupe/stray/<task>/<n>` and the branch put back at the recorded commit.
 * A tip behind it (a stage's commit recorded, the process gone before it moved the branch) is
 * brought up to it. `recorded` null: nothing was recorded, the branch belongs at its start.
 */
export async function restoreRecordedTip(options: {
  repo: string;
  taskId: string;
  branch: string;
  base: string;
  recorded: string | null;
}): Promise<StrayCommit | null> {
  const { repo, taskId, branch } = options;
  const tip = await resolveCommit(repo, `refs/heads/${branch}`);
  if (!tip) return null;
  const recorded = options.recorded ?? (await gitOk(repo, ['merge-base', tip, options.base])).trim();
  if (tip === recorded) return null;
  let stray: StrayCommit | null = null;
  if (!(await isAncestor(repo, tip, recorded))) {
    stray = { sha: tip, tag: await nextStrayTag(repo, taskId) };
    await gitOk(repo, ['tag', stray.tag, tip]);
  }
  const checkout = (await worktreeEntries(repo)).find((e) => e.branch === branch && !e.bare);
  // in the task's worktree the files go back with the branch; elsewhere only if nobody moved it meanwhile
  if (checkout) await gitOk(checkout.path, ['reset', '--hard', '--quiet', recorded]);
  else await gitOk(repo, ['update-ref', `refs/heads/${branch}`, recorded, tip]);
  return stray;
}

async function nextStrayTag(repo: string, taskId: string): Promise<string> {
  const prefix = `troupe/stray/${taskId}/`;
  const taken = (await git(repo, ['tag', '--list', `${prefix}*`])).stdout.split('\n').filter(Boolean);
  return `${prefix}${taken.length + 1}`;
}

/**
 * Whether the commits from `recorded` (the branch's last commit in the log) to `head` can be the
 * running stage's agent's own: `head` descends from `recorded` and none of them is troupe's.
 * troupe's commits (a stage's, a join's merges, `troupe: ` messages all) reach a branch only after
 * the log recorded them, so one the log does not know is a superseded attempt's (or an older
 * troupe's, which merged in place) and must not be taken for the agent's work.
 */
export async function agentsOwnCommits(path: string, recorded: string, head: string): Promise<boolean> {
  if (!(await isAncestor(path, recorded, head))) return false;
  const subjects = await gitOk(path, ['log', '--format=%s', `${recorded}..${head}`]);
  return !subjects.split('\n').some((subject) => subject.startsWith('troupe: '));
}
