import { NotFoundError, UsageError } from '../core/errors.js';
import { gitOk, identityEnv, isAncestor, resolveCommit } from './git.js';
import { tryMerge, withScratchCheckout } from './merge.js';
import { fetchRemote, PushRejectedError, push, type RemoteRepo, tracking } from './remote-repo.js';

export type RemoteMergeResult =
  | { merged: 'fast-forward' | 'merge-commit' | 'up-to-date'; sha: string }
  | { conflict: string[] };

/** Workers that keep losing the race to a busy base give up after this many tries. */
const ATTEMPTS = 5;

/**
 * Merges the task branch as the remote has it into the remote's base, made safe by git alone:
 * the merge is made on the base tip just fetched and pushed without force, so the push is refused
 * when anyone moved base meanwhile — then it is fetched and made again. A task branch already in
 * base is `up-to-date`: two workers racing make one merge, never none and never two.
 */
export async function mergeIntoRemoteBase(
  at: RemoteRepo,
  taskId: string,
  branch: string,
  base: string,
): Promise<RemoteMergeResult> {
  const message = `troupe: merge ${branch} (task ${taskId}) into ${base}`;
  const env = await identityEnv(at.repo);
  for (let attempt = 1; ; attempt++) {
    await fetchRemote(at);
    const tip = await resolveCommit(at.repo, tracking(at, branch));
    if (!tip) throw new NotFoundError(`task ${taskId} has no branch ${branch} on ${at.remote}`);
    const baseTip = await resolveCommit(at.repo, tracking(at, base));
    if (!baseTip) throw new UsageError(`base ${JSON.stringify(base)} is not a branch of ${at.remote}`);
    if (await isAncestor(at.repo, tip, baseTip)) return { merged: 'up-to-date', sha: baseTip };
    let made: RemoteMergeResult;
    if (await isAncestor(at.repo, baseTip, tip)) made = { merged: 'fast-forward', sha: tip };
    else {
      made = await withScratchCheckout(at.repo, taskId, baseTip, async (scratch) => {
        const files = await tryMerge(scratch, tip, message, env);
        if (files) return { conflict: files };
        return { merged: 'merge-commit', sha: (await gitOk(scratch, ['rev-parse', 'HEAD'])).trim() };
      });
    }
    if ('conflict' in made) return made;
    if ((await push(at, [`${made.sha}:refs/heads/${base}`])) === 'pushed') return made;
    if (attempt >= ATTEMPTS) throw new PushRejectedError(base, at.remote);
  }
}
