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
  /** Removes the checkout (idempotent). A commit the verifier made there is kept as a tag. */
  remove(): Promise<void>;
}

/**
 * A fresh worktree at the worker's commit for a verifier, so it sees what was committed and not
 * the worker's directory. `.troupe/tmp/verify-<task>-<random>/`, detached (no branch).
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
  await ensureExcluded(repo);
  mkdirSync(scratchDir(repo), { recursive: true });
  const path = join(scratchDir(repo), `verify-${options.taskId}-${randomBytes(4).toString('hex')}`);
  await gitOk(repo, ['worktree', 'add', '--detach', '--quiet', path, sha]);
  let removed = false;
  return {
    path,
    sha,
    async remove() {
      if (removed) return;
      removed = true;
      await removeScratch(repo, path, `troupe/archive/${options.taskId}-verify-${sha.slice(0, 12)}`, sha);
    },
  };
}

/** Runs `fn` with a verify checkout and removes it afterwards, whatever happens. */
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

/** Removes a scratch checkout; if its HEAD moved past `startedAt`, the new commits are tagged first. */
export async function removeScratch(repo: string, path: string, archiveTag: string, startedAt?: string) {
  const head = await git(path, ['rev-parse', '--verify', '--quiet', 'HEAD']);
  const sha = head.code === 0 ? head.stdout.trim() : null;
  if (sha && startedAt && sha !== startedAt) {
    await git(repo, ['tag', archiveTag, sha]);
  }
  await git(repo, ['worktree', 'remove', '--force', '--force', path]);
  await git(repo, ['worktree', 'prune']);
}
