import { existsSync, readdirSync, realpathSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { NotFoundError, StateError } from '../core/errors.js';
import { removeCheckout, takeCheckout } from './checkout-pool.js';
import { appendBranchSection } from './config-file.js';
import { GitError, NoCommitError } from './errors.js';
import { git, gitOk, gitOkRetryingLock, refExists, resolveCommit } from './git.js';
import { assertAgentId, assertBranchPrefix, assertTaskId } from './ids.js';
import { registrationTurn } from './registrations.js';
import { commonDir, currentBranch, ensureExcluded, worktreesDir } from './repo.js';
import { samePath, worktreeEntries } from './worktree-list.js';

/**
 * Names (documented in docs/workspaces.md). git cannot hold both `troupe/T-1` and `troupe/T-1/x`
 * (a ref is a file or a directory, not both), so a fan-out branch is a sibling of its task's:
 *
 *   task       .troupe/worktrees/T-1/            branch troupe/T-1
 *   fan-out    .troupe/worktrees/T-1--<agent>/   branch troupe/T-1--<agent>
 *
 * The base a branch started from is kept in git config (`branch.<name>.troupeBase`) so listing,
 * prune and merge know it later, in any process; git drops it with the branch.
 */

export const DEFAULT_BRANCH_PREFIX = 'troupe/';

export interface TaskWorktree {
  /** Absolute path of the worktree (no trailing slash). */
  path: string;
  /** Short branch name, e.g. `troupe/T-1`. */
  branch: string;
  /** What the branch started from and merges back into: a branch name, or a commit. */
  base: string;
  /** False when an existing worktree (or branch) was reused, e.g. after kill -9. */
  created: boolean;
  /** A worktree just created: the commit it was made at (clean, nothing else in it). */
  start?: string;
}

export interface EnsureTaskWorktreeOptions {
  repo: string;
  taskId: string;
  /** Branch or commit to start from; default: the branch checked out in the main checkout. */
  base?: string;
  branchPrefix?: string;
}

export function taskBranch(taskId: string, branchPrefix = DEFAULT_BRANCH_PREFIX): string {
  return `${branchPrefix}${taskId}`;
}

export function fanOutName(taskId: string, agent: string): string {
  return `${taskId}--${agent}`;
}

/** Splits a worktree directory name back into task and agent. */
export function parseWorktreeName(name: string): { task: string; agent: string | null } {
  const at = name.indexOf('--');
  return at < 0 ? { task: name, agent: null } : { task: name.slice(0, at), agent: name.slice(at + 2) };
}

/** The task's worktree: reused when it exists (a crashed run's, commits and edits intact), else created. */
export async function ensureTaskWorktree(options: EnsureTaskWorktreeOptions): Promise<TaskWorktree> {
  assertTaskId(options.taskId);
  const prefix = options.branchPrefix ?? DEFAULT_BRANCH_PREFIX;
  assertBranchPrefix(prefix);
  const repo = realpathSync(options.repo);
  const base = options.base ?? (await defaultBase(repo));
  return ensureWorktree(repo, options.taskId, taskBranch(options.taskId, prefix), {
    base,
    task: options.taskId,
  });
}

export interface EnsureBranchWorktreeOptions {
  repo: string;
  taskId: string;
  agent: string;
  /** The branch it starts from and merges back into; default: the task branch. */
  from?: string;
  /** The commit a new branch starts at; default: `from`'s tip. */
  startAt?: string;
  branchPrefix?: string;
}

/** A fan-out branch's worktree, started from the task branch (its base, which the join merges into). */
export async function ensureBranchWorktree(options: EnsureBranchWorktreeOptions): Promise<TaskWorktree> {
  assertTaskId(options.taskId);
  assertAgentId(options.agent);
  const prefix = options.branchPrefix ?? DEFAULT_BRANCH_PREFIX;
  assertBranchPrefix(prefix);
  const repo = realpathSync(options.repo);
  const name = fanOutName(options.taskId, options.agent);
  return ensureWorktree(
    repo,
    name,
    `${prefix}${name}`,
    { base: options.from ?? taskBranch(options.taskId, prefix), task: options.taskId, agent: options.agent },
    options.startAt,
  );
}

export interface RemoveWorktreeOptions {
  repo: string;
  taskId: string;
  agent?: string;
  /** Remove even with uncommitted changes (they are lost; commits never are). */
  force?: boolean;
}

/**
 * Removes a task (or fan-out) worktree's directory; its branch and commits stay. Refuses when the
 * worktree has uncommitted changes unless `force`. Returns false when there was nothing to remove.
 */
export async function removeWorktree(options: RemoveWorktreeOptions): Promise<boolean> {
  assertTaskId(options.taskId);
  if (options.agent !== undefined) assertAgentId(options.agent);
  const repo = realpathSync(options.repo);
  const name = options.agent === undefined ? options.taskId : fanOutName(options.taskId, options.agent);
  const path = join(worktreesDir(repo), name);
  const entry = (await worktreeEntries(repo)).find((e) => samePath(e.path, path));
  if (!entry) return false;
  if (entry.prunable) {
    await gitOk(repo, ['worktree', 'prune']);
    return true;
  }
  // git itself refuses a worktree with modified or untracked files unless forced
  const result = await git(repo, [
    'worktree',
    'remove',
    ...(options.force ? ['--force', '--force'] : []),
    path,
  ]);
  if (result.code !== 0) {
    if (!options.force && /modified or untracked files/.test(result.stderr)) {
      throw new StateError(`worktree ${path} has uncommitted changes`, {
        hint: 'commit them (or pass force) before removing it',
      });
    }
    throw new GitError(['worktree', 'remove', path], result.code, result.stderr);
  }
  return true;
}

export async function defaultBase(repo: string): Promise<string> {
  const branch = await currentBranch(repo);
  if (branch) return branch;
  const head = await resolveCommit(repo, 'HEAD');
  if (!head)
    throw new StateError(`${repo} has no commit yet`, { hint: 'make a first commit, then run again' });
  return head;
}

/** A branch checked out (in the main checkout) that has no commit yet: a fresh `git init`. */
async function isUnborn(repo: string, branch: string): Promise<boolean> {
  return (await currentBranch(repo)) === branch && !(await refExists(repo, `refs/heads/${branch}`));
}

export async function branchBase(repo: string, branch: string): Promise<string | null> {
  const result = await git(repo, ['config', '--get', `branch.${branch}.troupeBase`]);
  return result.code === 0 && result.stdout.trim() ? result.stdout.trim() : null;
}

interface BranchMeta {
  base: string;
  task: string;
  agent?: string;
}

/**
 * A new worktree is registered locked as `initializing` (registrations.ts: registering takes
 * turns) and its files are checked out after; one found locked so, after a crash, is made again.
 */
const INITIALIZING = 'initializing';

async function ensureWorktree(
  repo: string,
  name: string,
  branch: string,
  meta: BranchMeta,
  /** The commit a new branch starts at (default: the base's tip). */
  startAt?: string,
): Promise<TaskWorktree> {
  const path = join(worktreesDir(repo), name);
  // a fan-out branch's: from a checkout the task made ahead, when it has one and nothing is here
  // (the base is the task branch, a name troupe made, and the start a commit: never an option)
  const ahead =
    meta.agent && !(startAt ?? meta.base).startsWith('-') && !existsSync(path)
      ? await fromCheckoutAhead(repo, path, branch, meta, startAt)
      : null;
  if (ahead) return ahead;
  const worktree = await makeWorktree(repo, path, branch, meta, startAt);
  if (worktree.created) {
    // the branch is new: its keys go in with one write, beside the checkout
    await Promise.all([
      gitOk(worktree.path, ['reset', '--hard', '--quiet']),
      recordNewBranchMeta(repo, branch, meta),
    ]);
    await registrationTurn(repo, () => gitOk(repo, ['worktree', 'unlock', worktree.path]));
  }
  return worktree;
}

/**
 * A new fan-out branch's worktree made of a checkout the task keeps (checkout-pool.ts: one made
 * ahead, or one a verifier is done with): moved here, then given the new branch at the base's tip
 * (only the files that differ are written; a used one is cleaned). Null
 * when there is none, or when git refuses either step (a registration or a branch left by a
 * crash): the worktree is then made the careful way, which knows what to do with those.
 */
async function fromCheckoutAhead(
  repo: string,
  path: string,
  branch: string,
  meta: BranchMeta,
  startAt?: string,
): Promise<TaskWorktree | null> {
  const ahead = await takeCheckout(repo, meta.task, 'fresh');
  if (!ahead) return null;
  const moved = await registrationTurn(repo, () => git(repo, ['worktree', 'move', ahead.path, path]));
  if (moved.code !== 0) {
    await removeCheckout(repo, ahead.path);
    return null;
  }
  // one a verifier used: what it changed or left goes
  const force = ahead.used ? ['--force'] : [];
  const [branched] = await Promise.all([
    git(path, ['checkout', '--quiet', ...force, '--no-track', '-b', branch, startAt ?? meta.base]),
    recordNewBranchMeta(repo, branch, meta),
  ]);
  const cleaned = branched.code === 0 && (!ahead.used || (await git(path, ['clean', '-ffdxq'])).code === 0);
  const start = cleaned ? (startAt ?? (await resolveCommit(path, 'HEAD'))) : null;
  if (!start) {
    await removeCheckout(repo, path);
    return null;
  }
  return { path, branch, base: meta.base, created: true, start };
}

async function makeWorktree(
  repo: string,
  path: string,
  branch: string,
  meta: BranchMeta,
  startAt?: string,
): Promise<TaskWorktree> {
  const base = meta.base;
  const [, entries, branchExists, start] = await Promise.all([
    // two at once could both append the missing lines
    registrationTurn(`${repo}\0exclude`, () => ensureExcluded(repo)),
    registrationTurn(repo, () => worktreeEntries(repo)),
    refExists(repo, `refs/heads/${branch}`),
    resolveCommit(repo, startAt ?? base),
  ]);
  const entry = entries.find((e) => samePath(e.path, path));
  if (entry?.prunable) {
    // its directory was deleted by hand: forget the registration, keep the branch
    await registrationTurn(repo, () => gitOk(repo, ['worktree', 'prune']));
  } else if (entry?.locked?.startsWith(INITIALIZING) || (entry && entry.branch === null && !branchExists)) {
    // `git worktree add` was killed half-way (the checkout is incomplete), or a checkout made
    // ahead was moved here and not yet given its branch: nothing of the agent's is in it yet
    await registrationTurn(repo, () => gitOk(repo, ['worktree', 'remove', '--force', '--force', path]));
  } else if (entry) {
    if (entry.branch !== branch) {
      throw new StateError(
        `${path} is a worktree on ${entry.branch ?? 'a detached HEAD'}, not on ${branch}`,
        { hint: `remove it (git worktree remove ${path}) if it is not needed` },
      );
    }
    await recordMeta(repo, branch, meta);
    return { path, branch, base: (await branchBase(repo, branch)) ?? base, created: false };
  }
  if (existsSync(path)) {
    if (readdirSync(path).length > 0) {
      throw new StateError(`${path} exists and is not a git worktree; troupe will not write over it`, {
        hint: 'move it away, then run again',
      });
    }
    rmdirSync(path);
  }
  if (branchExists) {
    // the branch survived its worktree (removed, or pruned by hand): check it out again, commits intact
    await registrationTurn(repo, () => gitOk(repo, ['worktree', 'add', path, branch]));
    await recordMeta(repo, branch, meta);
    return { path, branch, base: (await branchBase(repo, branch)) ?? base, created: false };
  }
  if (!start) {
    if (await isUnborn(repo, base)) throw new NoCommitError(repo, base);
    throw new NotFoundError(`base ${JSON.stringify(base)} is not a commit in ${repo}`);
  }
  const add = [
    'worktree',
    'add',
    '--no-checkout',
    '--lock',
    '--reason',
    INITIALIZING,
    '--no-track',
    '-b',
    branch,
    path,
    start,
  ];
  await registrationTurn(repo, () => gitOk(repo, add));
  return { path, branch, base, created: true, start };
}

/** A branch just made: its keys, in one write of the config when it has no section yet (else by git). */
async function recordNewBranchMeta(repo: string, branch: string, meta: BranchMeta): Promise<void> {
  if (!(await appendBranchSection(await commonDir(repo), branch, metaKeys(meta))))
    await recordMeta(repo, branch, meta, new Map());
}

/** Keeps base, task and agent in the branch's git config (kept if already there: the base never moves). */
async function recordMeta(
  repo: string,
  branch: string,
  meta: BranchMeta,
  known?: Map<string, { base?: string; task?: string; agent?: string }>,
): Promise<void> {
  const had = (known ?? (await troupeBranches(repo))).get(branch);
  for (const [key, value] of metaKeys(meta, had))
    await gitOkRetryingLock(repo, ['config', `branch.${branch}.${key}`, value]);
}

/** The branch's troupe keys (`branch.<name>.troupeTask|troupeAgent|troupeBase`) not among those it `had`. */
function metaKeys(
  meta: BranchMeta,
  had?: { base?: string; task?: string; agent?: string },
): [string, string][] {
  const keys: [string, string][] = [];
  if (!had?.task) keys.push(['troupeTask', meta.task]);
  if (meta.agent && !had?.agent) keys.push(['troupeAgent', meta.agent]);
  if (!had?.base) keys.push(['troupeBase', meta.base]);
  return keys;
}

/** Every branch troupe created (it has troupe keys in its config), with what they say. */
export async function troupeBranches(
  repo: string,
): Promise<Map<string, { base?: string; task?: string; agent?: string }>> {
  const out = await git(repo, ['config', '--get-regexp', '^branch\\..*\\.troupe(base|task|agent)$']);
  const branches = new Map<string, { base?: string; task?: string; agent?: string }>();
  for (const line of out.stdout.split('\n')) {
    const match = /^branch\.(.+)\.troupe(base|task|agent) (.*)$/.exec(line);
    if (!match) continue;
    const [, branch, key, value] = match as unknown as [string, string, 'base' | 'task' | 'agent', string];
    const entry = branches.get(branch) ?? {};
    entry[key] = value;
    branches.set(branch, entry);
  }
  return branches;
}
