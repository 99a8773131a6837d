import { realpathSync } from 'node:fs';
import { NotFoundError } from '../core/errors.js';
import {
  giveBackCheckout,
  makeDetachedCheckout,
  releaseTaskCheckouts,
  removeCheckout,
  type TakenCheckout,
  takeCheckout,
} from './checkout-pool.js';
import { git, resolveCommit } from './git.js';
import { assertTaskId } from './ids.js';

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

const FULL_HASH = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * A fresh worktree at the worker's commit for a verifier, so it sees what was committed and not
 * the worker's directory. `.troupe/tmp/verify-<task>-<random>/`, detached (no branch), from the
 * task's checkout pool (checkout-pool.ts) when it has one: a checkout an earlier verifier used,
 * moved to `sha` and cleaned to exactly its tree, or one made ahead, moved to `sha`.
 */
export async function verifyCheckout(options: {
  repo: string;
  taskId: string;
  sha: string;
}): Promise<VerifyCheckout> {
  assertTaskId(options.taskId);
  const repo = realpathSync(options.repo);
  // a full hash (what the log records) is checked by the checkout itself: one git process less
  const sha = FULL_HASH.test(options.sha) ? options.sha : await resolveCommit(repo, options.sha);
  if (!sha) throw new NotFoundError(`no commit ${options.sha} in ${repo}`);
  const path =
    (await reused(repo, await takeCheckout(repo, options.taskId, 'used'), sha)) ??
    (await makeDetachedCheckout(repo, options.taskId, sha));
  let done = false;
  return {
    path,
    sha,
    async remove() {
      if (done) return;
      done = true;
      const archive = `troupe/archive/${options.taskId}-verify-${sha.slice(0, 12)}`;
      if (await keepCommits(repo, path, archive, sha)) giveBackCheckout(repo, options.taskId, path);
      else await removeCheckout(repo, path);
    },
  };
}

/** Removes the checkouts the task kept for reuse (at the end of a run). */
export async function releaseVerifyCheckouts(repo: string, taskId: string): Promise<void> {
  await releaseTaskCheckouts(realpathSync(repo), taskId);
}

/**
 * A pooled checkout moved to `sha`, with nothing else in it (a used one cleaned of what a
 * verifier left); null when there is none (or it broke: it is removed).
 */
async function reused(repo: string, taken: TakenCheckout | null, sha: string): Promise<string | null> {
  if (!taken) return null;
  const { path, used } = taken;
  const moved =
    (await git(path, ['checkout', '--detach', '--force', '--quiet', sha])).code === 0 &&
    (!used || (await git(path, ['clean', '-ffdxq'])).code === 0);
  if (moved) return path;
  await removeCheckout(repo, path);
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
