import { randomBytes } from 'node:crypto';
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { NotFoundError } from '../core/errors.js';
import { git, gitOk, resolveCommit } from './git.js';
import { assertTaskId } from './ids.js';
import { ensureExcluded, scratchDir } from './repo.js';

export interface VerifyCheckout {
  /** A fresh detached checkout of `sha`: only what the worker committed. */
  path: string;
  sha: string;
  /**
   * Done with it (idempotent): a commit the verifier made there is kept as a tag, and the checkout
   * is kept for the task's next verification until `releaseVerifyCheckouts`.
   */
  remove(): Promise<void>;
}

/**
 * Checkouts a task's verifiers are done with, per repository and task: the next verification moves
 * one to its commit (only the files that differ are written) instead of checking out the whole
 * tree again. A plan's pieces are verified one after another in a handful of checkouts.
 */
const idleCheckouts = new Map<string, string[]>();
const poolKey = (repo: string, taskId: string) => `${repo}\0${taskId}`;

/**
 * A fresh worktree at the worker's commit for a verifier, so it sees what was committed and not
 * the worker's directory. `.troupe/tmp/verify-<task>-<random>/`, detached (no branch); one the
 * task used before, moved to `sha` and cleaned to exactly its tree, when there is one.
 */
export async function verifyCheckout(options: {
  repo: string;
  taskId: string;
  sha: string;
}): Promise<VerifyCheckout> {
  assertTaskId(options.taskId);
  const repo = realpathSync(options.repo);
  const sha = await resolveCommit(repo, options.sha);
  if (!sha) throw new NotFoundError(`no commit ${options.sha} in ${repo}`);
  const key = poolKey(repo, options.taskId);
  const path =
    (await reused(repo, idleCheckouts.get(key), sha)) ?? (await freshCheckout(repo, options.taskId, sha));
  let done = false;
  return {
    path,
    sha,
    async remove() {
      if (done) return;
      done = true;
      const archive = `troupe/archive/${options.taskId}-verify-${sha.slice(0, 12)}`;
      if (await keepCommits(repo, path, archive, sha)) {
        idleCheckouts.set(key, [...(idleCheckouts.get(key) ?? []), path]);
      } else {
        await removeWorktreeDir(repo, path);
      }
    },
  };
}

/** Removes the checkouts the task's verifiers left for reuse (at the end of a run). */
export async function releaseVerifyCheckouts(repo: string, taskId: string): Promise<void> {
  const key = poolKey(realpathSync(repo), taskId);
  const paths = idleCheckouts.get(key) ?? [];
  idleCheckouts.delete(key);
  for (const path of paths) await removeWorktreeDir(repo, path);
}

async function freshCheckout(repo: string, taskId: string, sha: string): Promise<string> {
  await ensureExcluded(repo);
  mkdirSync(scratchDir(repo), { recursive: true });
  const path = join(scratchDir(repo), `verify-${taskId}-${randomBytes(4).toString('hex')}`);
  await gitOk(repo, ['worktree', 'add', '--detach', '--quiet', path, sha]);
  return path;
}

/** An idle checkout moved to `sha`, with nothing else in it; null when there is none (or it broke). */
async function reused(repo: string, idle: string[] | undefined, sha: string): Promise<string | null> {
  const path = idle?.pop();
  if (!path) return null;
  const moved =
    (await git(path, ['checkout', '--detach', '--force', '--quiet', sha])).code === 0 &&
    (await git(path, ['clean', '-ffdxq'])).code === 0;
  if (moved) return path;
  await removeWorktreeDir(repo, path);
  return null;
}

/** Runs `fn` with a verify checkout and is done with it afterwards, whatever happens. */
export async function withVerifyCheckout<T>(
  options: { repo: string; taskId: string; sha: string },
  fn: (checkout: VerifyCheckout) => Promise<T>,
): Promise<T> {
  const checkout = await verifyCheckout(options);
  try {
    return await fn(checkout);
  } finally {
    await checkout.remove();
  }
}

/**
 * A verifier's own commits (its checkout's HEAD moved past `startedAt`) are tagged `archiveTag`.
 * False when the checkout's HEAD cannot be read: it is no checkout to reuse.
 */
async function keepCommits(
  repo: string,
  path: string,
  archiveTag: string,
  startedAt: string,
): Promise<boolean> {
  const head = await git(path, ['rev-parse', '--verify', '--quiet', 'HEAD']);
  if (head.code !== 0) return false;
  const sha = head.stdout.trim();
  if (sha !== startedAt) await git(repo, ['tag', archiveTag, sha]);
  return true;
}

async function removeWorktreeDir(repo: string, path: string): Promise<void> {
  await git(repo, ['worktree', 'remove', '--force', '--force', path]);
}
