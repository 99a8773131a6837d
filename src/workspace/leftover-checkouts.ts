import { basename, dirname } from 'node:path';
import { removeCheckout } from './checkout-pool.js';
import { git, heldByRef } from './git.js';
import { registrationTurn } from './registrations.js';
import { parseScratchName, scratchDir } from './repo.js';
import { canonical, worktreeEntries } from './worktree-list.js';

/**
 * The scratch checkouts (a verifier's, one made ahead, a merge's) that a killed run of the task
 * left in `.troupe/tmp/`: a checkout lives in its process only, so when a new run holds the task
 * no process is using them, and they go. A commit made in one that no branch or tag holds (a
 * verifier's own) is kept first as tag `troupe/archive/<task>-<kind>-<sha12>`.
 */
export async function removeLeftoverCheckouts(repo: string, taskId: string): Promise<void> {
  const scratch = canonical(scratchDir(repo));
  const entries = await registrationTurn(repo, () => worktreeEntries(repo));
  const leftovers = entries.flatMap((entry) => {
    const name = parseScratchName(basename(entry.path));
    return name?.task === taskId && canonical(dirname(entry.path)) === scratch ? [{ ...entry, ...name }] : [];
  });
  for (const { path, head, kind, prunable } of leftovers) {
    if (head && !(await heldByRef(repo, head)))
      await git(repo, ['tag', `troupe/archive/${taskId}-${kind}-${head.slice(0, 12)}`, head]);
    if (prunable) await registrationTurn(repo, () => git(repo, ['worktree', 'prune']));
    else await removeCheckout(repo, path);
  }
}
