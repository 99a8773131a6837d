import { git, gitOk } from './git.js';
import { registrationTurn } from './registrations.js';
import { ensureExcluded, newScratchPath } from './repo.js';

/**
 * A task's detached checkouts, per repository and task, in `.troupe/tmp/verify-<task>-<random>/`
 * (so `troupe worktrees prune` knows them): made ahead of need while a plan's agents work, so a
 * piece's worktree or a verifier's checkout is a move to its commit (only the files that differ
 * are written) instead of a checkout of the whole tree on the graph's critical path.
 *
 * - `fresh`: made ahead at the task branch, untouched; a piece's worktree is made of one first.
 * - `used`: a verifier is done with it (it may hold the verifier's leftovers); whoever takes it
 *   next (a verifier first, a piece's worktree when no fresh one is ready) cleans it.
 *
 * They live in this process only: what a killed run left goes when its task is resumed
 * (leftover-checkouts.ts), or with `troupe worktrees prune`.
 */
interface Pool {
  repo: string;
  /** The branch (or commit) checkouts are made at. */
  rev: string;
  /** Fresh checkouts wanted, ready or being made. */
  target: number;
  fresh: string[];
  used: string[];
  /** Checkouts being made; a claimed one goes to the taker waiting for it. */
  making: Making[];
}

interface Making {
  /** Its path, or null when git refused. */
  done: Promise<string | null>;
  claimed: boolean;
}

/** Checkouts of one task are made one at a time: each writes the whole tree, beside the work a task waits on. */
const MAKING_AT_ONCE = 1;

const pools = new Map<string, Pool>();
const poolKey = (repo: string, taskId: string) => `${repo}\0${taskId}`;

function poolOf(repo: string, taskId: string): Pool {
  const key = poolKey(repo, taskId);
  const pool = pools.get(key) ?? { repo, rev: 'HEAD', target: 0, fresh: [], used: [], making: [] };
  pools.set(key, pool);
  return pool;
}

/**
 * Keeps `count` fresh checkouts of the task ready (made at `rev`, one at a time, in the
 * background); 0 stops making them (those made stay until taken or released).
 */
export function keepCheckoutsReady(repo: string, taskId: string, rev: string, count: number): void {
  const pool = poolOf(repo, taskId);
  pool.rev = rev;
  pool.target = count;
  refill(pool, taskId);
}

/** A checkout taken from the pool: `used` when a verifier had it (clean it before use). */
export interface TakenCheckout {
  path: string;
  used: boolean;
}

/**
 * A checkout of the task's, ready now: `prefer` says which kind comes first (a piece's worktree
 * wants a fresh one, a verifier the one an earlier verifier used); failing both, the oldest being
 * made (nearer done than one made from now, beside it); null when there is none.
 */
export async function takeCheckout(
  repo: string,
  taskId: string,
  prefer: 'fresh' | 'used',
): Promise<TakenCheckout | null> {
  const pool = pools.get(poolKey(repo, taskId));
  if (!pool) return null;
  const fresh = () => {
    const path = pool.fresh.shift();
    return path ? { path, used: false } : null;
  };
  const used = () => {
    const path = pool.used.pop();
    return path ? { path, used: true } : null;
  };
  const ready = prefer === 'fresh' ? (fresh() ?? used()) : (used() ?? fresh());
  const waited = ready ? null : pool.making.find((m) => !m.claimed);
  if (waited) waited.claimed = true;
  refill(pool, taskId);
  if (ready || !waited) return ready;
  const path = await waited.done;
  return path ? { path, used: false } : null;
}

/** A verifier is done with this checkout: kept for the task's next verification. */
export function giveBackCheckout(repo: string, taskId: string, path: string): void {
  poolOf(repo, taskId).used.push(path);
}

/** Removes the task's checkouts (at the end of a run), those still being made once they are. */
export async function releaseTaskCheckouts(repo: string, taskId: string): Promise<void> {
  const key = poolKey(repo, taskId);
  const pool = pools.get(key);
  if (!pool) return;
  pool.target = 0;
  await Promise.all(pool.making.map((m) => m.done));
  pools.delete(key);
  for (const path of [...pool.fresh, ...pool.used]) await removeCheckout(repo, path);
}

/**
 * A detached checkout of `rev` in the task's scratch space: registered in its turn, then its files
 * written beside others' (at a lower priority when made ahead: `background`).
 */
export async function makeDetachedCheckout(
  repo: string,
  taskId: string,
  rev: string,
  options: { background?: boolean } = {},
): Promise<string> {
  await ensureExcluded(repo);
  const path = newScratchPath(repo, 'verify', taskId);
  await registrationTurn(repo, () =>
    gitOk(repo, ['worktree', 'add', '--detach', '--no-checkout', '--quiet', path, rev]),
  );
  await gitOk(path, ['reset', '--hard', '--quiet'], options);
  return path;
}

export async function removeCheckout(repo: string, path: string): Promise<void> {
  await registrationTurn(repo, () => git(repo, ['worktree', 'remove', '--force', '--force', path]));
}

function refill(pool: Pool, taskId: string): void {
  const unclaimed = () => pool.making.filter((m) => !m.claimed).length;
  while (pool.fresh.length + unclaimed() < pool.target && pool.making.length < MAKING_AT_ONCE) {
    const making: Making = { done: Promise.resolve(null), claimed: false };
    const settle = (path: string | null) => {
      pool.making.splice(pool.making.indexOf(making), 1);
      if (path === null || making.claimed) return path;
      // released meanwhile: nobody will take it
      if (pools.get(poolKey(pool.repo, taskId)) !== pool) {
        void removeCheckout(pool.repo, path);
        return null;
      }
      pool.fresh.push(path);
      refill(pool, taskId);
      return path;
    };
    making.done = makeDetachedCheckout(pool.repo, taskId, pool.rev, { background: true }).then(settle, () =>
      settle(null),
    );
    pool.making.push(making);
  }
}
