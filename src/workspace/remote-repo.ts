import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { StateError } from '../core/errors.js';
import { GitError } from './errors.js';
import { git, gitOk, isAncestor, resolveCommit } from './git.js';
import { ensureExcluded, findRepo } from './repo.js';
import { takingTurns } from './turns.js';
import { worktreeEntries } from './worktree-list.js';

/**
 * This machine's side of a `workspace: {remote: …}` (docs/workspaces.md, "Worktrees across
 * machines"): the repository the task works in here, the remote in it, and the moves that keep
 * its branches where the remote has them. A push is never forced over someone else's work.
 */

export interface RemoteRepo {
  /** The local repository: the project's own checkout, or a clone in the cache. */
  repo: string;
  /** The remote's name in `repo`. */
  remote: string;
}

/**
 * Where `spec` (a remote name, or a URL) is worked on here: `root`'s own checkout when it has
 * that remote, else a clone of the URL in `cacheDir` (made once, fetched afterwards).
 */
export async function locateRemote(root: string, spec: string, cacheDir: string): Promise<RemoteRepo> {
  const repo = await findRepo(root);
  if (repo) {
    if ((await git(repo, ['remote', 'get-url', spec])).code === 0) return { repo, remote: spec };
    for (const name of (await gitOk(repo, ['remote'])).split('\n').filter(Boolean)) {
      const url = (await gitOk(repo, ['remote', 'get-url', name])).trim();
      if (sameUrl(url, spec, repo)) return { repo, remote: name };
    }
  }
  if (!/[:/]/.test(spec)) {
    throw new StateError(`workspace.remote ${spec} is not a remote of ${repo ?? root}`, {
      hint: repo
        ? `add it (git remote add ${spec} <url>), or give the remote's URL`
        : `${root} is not a git checkout: give the remote's URL (workspace: {remote: <url>})`,
    });
  }
  const name = basename(spec.replace(/\/+$/, ''))
    .replace(/\.git$/, '')
    .replace(/[^A-Za-z0-9_.-]/g, '_');
  const dir = join(cacheDir, `${name}-${createHash('sha256').update(spec).digest('hex').slice(0, 8)}`);
  // the cache is troupe's: never untracked files in a project that is another repository's checkout
  if (repo) await ensureExcluded(repo);
  if (!existsSync(join(dir, '.git'))) await cloneOnce(spec, dir);
  return { repo: realpathSync(dir), remote: 'origin' };
}

function sameUrl(url: string, spec: string, repo: string): boolean {
  if (url === spec) return true;
  const a = resolve(repo, url);
  const b = resolve(spec);
  return existsSync(a) && existsSync(b) && realpathSync(a) === realpathSync(b);
}

/** Clones beside `dir` and renames it into place, so a clone killed half-way is never taken for one. */
async function cloneOnce(url: string, dir: string): Promise<void> {
  mkdirSync(dirname(dir), { recursive: true });
  const partial = `${dir}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  await gitOk(dirname(dir), ['clone', '--quiet', url, partial]);
  try {
    renameSync(partial, dir);
  } catch (error) {
    // another process cloned it first: use theirs
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(join(dir, '.git'))) throw error;
  }
}

export function tracking(at: RemoteRepo, branch: string): string {
  return `refs/remotes/${at.remote}/${branch}`;
}

/**
 * Fetches and pushes of one repository take turns in this process: both write its remote-tracking
 * refs, and git refuses a ref another one is writing. Another process's is retried (fetch).
 */
const inTurn = takingTurns();

export function fetchRemote(at: RemoteRepo): Promise<void> {
  const args = ['fetch', '--quiet', '--prune', at.remote];
  return inTurn(at.repo, async () => {
    for (let attempt = 1; ; attempt++) {
      const result = await git(at.repo, args);
      if (result.code === 0) return;
      if (attempt >= 5 || !/cannot lock ref|\.lock': File exists/.test(result.stderr)) {
        throw new GitError(args, result.code, result.stderr || result.stdout);
      }
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  });
}

/** Another worker pushed to the branch since this one fetched it: its work is not written over. */
export class PushRejectedError extends StateError {
  constructor(branch: string, remote: string) {
    super(
      `${remote} refused ${branch}: another worker moved it since this one fetched it (troupe never force-pushes over it)`,
      {
        hint: 'the commit stays local; resuming the task fetches the branch and continues from what its log knows',
      },
    );
  }
}

/** Pushes refspecs without force (unless `flags` hold a lease); 'rejected' when the remote refused a non-fast-forward. */
export async function push(
  at: RemoteRepo,
  refspecs: string[],
  flags: string[] = [],
): Promise<'pushed' | 'rejected'> {
  const result = await inTurn(at.repo, () =>
    git(at.repo, ['push', '--porcelain', ...flags, at.remote, ...refspecs]),
  );
  if (result.code === 0) return 'pushed';
  if (/^!\t.*\[rejected\]/m.test(result.stdout)) return 'rejected';
  // lost a race inside the remote: the ref moved between its check and its update
  if (
    /\[remote rejected\]/.test(result.stdout) &&
    /cannot lock ref|failed to update ref/.test(result.stderr + result.stdout)
  ) {
    return 'rejected';
  }
  throw new GitError(['push', at.remote, ...refspecs], result.code, result.stderr || result.stdout);
}

/** Pushes a local branch as it is: a fast-forward, or a PushRejectedError. */
export async function pushBranch(at: RemoteRepo, branch: string): Promise<void> {
  const ref = `refs/heads/${branch}`;
  if ((await push(at, [`${ref}:${ref}`])) === 'rejected') throw new PushRejectedError(branch, at.remote);
}

/**
 * The local branch catches up with the remote's (fetched): created from it when missing here
 * (from `start` when the remote has none either), moved to it when behind — in its worktree on
 * this machine, if it has one. A branch ahead of or beside the remote's is left: the task's log
 * says which is right (align).
 */
export async function catchUp(at: RemoteRepo, branch: string, start: string | null): Promise<void> {
  const theirs = await resolveCommit(at.repo, tracking(at, branch));
  const mine = await resolveCommit(at.repo, `refs/heads/${branch}`);
  if (!mine) {
    const from = theirs ?? start;
    if (from) await gitOk(at.repo, ['branch', '--no-track', branch, from]);
    return;
  }
  if (!theirs || mine === theirs || !(await isAncestor(at.repo, mine, theirs))) return;
  const checkout = (await worktreeEntries(at.repo)).find((e) => e.branch === branch && !e.prunable);
  if (checkout) {
    // a worktree left behind here by an earlier stage: what it has uncommitted is a crashed run's
    await gitOk(checkout.path, ['reset', '--hard', '--quiet', theirs]);
    await gitOk(checkout.path, ['clean', '-fd', '--quiet']);
  } else {
    await gitOk(at.repo, ['update-ref', `refs/heads/${branch}`, theirs, mine]);
  }
}

/**
 * After the local branch was put where the task's log says it is: the remote gets it too. Behind
 * (or missing): a plain push. With commits the log does not know (a stage that crashed after its
 * push, before it was recorded): they are kept as tag `troupe/archive/<name>-<sha12>` on the
 * remote, then the branch goes back — with a lease on exactly the tip seen, so a push that
 * arrived meanwhile is refused, never overwritten.
 */
export async function publishAsLogged(at: RemoteRepo, branch: string, name: string): Promise<void> {
  const mine = await resolveCommit(at.repo, `refs/heads/${branch}`);
  const theirs = await resolveCommit(at.repo, tracking(at, branch));
  if (!mine || mine === theirs) return;
  if (!theirs || (await isAncestor(at.repo, theirs, mine))) return pushBranch(at, branch);
  const tag = `refs/tags/troupe/archive/${name}-${theirs.slice(0, 12)}`;
  if ((await push(at, [`${theirs}:${tag}`])) === 'rejected') {
    throw new StateError(`${at.remote} already has a different ${tag}`);
  }
  const ref = `refs/heads/${branch}`;
  const lease = `--force-with-lease=${ref}:${theirs}`;
  if ((await push(at, [`${mine}:${ref}`], [lease])) === 'rejected') {
    throw new PushRejectedError(branch, at.remote);
  }
}
