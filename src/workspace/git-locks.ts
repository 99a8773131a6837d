import { linkSync, renameSync, rmSync, statSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * Waiting on a git lock another writer holds (`config.lock`, which every write of a repository's
 * config takes, git's and troupe's one-write branch sections alike (config-file.ts); `index.lock`;
 * a ref's). Parallel tasks take them in turns of milliseconds, so a conflict is asked again for
 * about two seconds. A config writer killed with -9 (a troupe killed mid-write, or a git it ran)
 * leaves its lock for good, and every later config write in the repository, the user's included,
 * fails until someone removes it: a config lock nobody has written for `STALE_CONFIG_LOCK_MS` is
 * that, and goes. No git command holds it that long (`git config --edit` edits the file itself).
 */
export const STALE_CONFIG_LOCK_MS = 10_000;

/** How long writers taking turns may keep a lock busy before the conflict is an error. */
const TURNS_MS = 2_000;

/** The lock file a failed git command's stderr says another writer holds, else null. */
export function lockNamedIn(stderr: string, cwd: string): string | null {
  const config = /could not lock config file (.+): File exists/.exec(stderr);
  if (config) return `${resolve(cwd, config[1] as string)}.lock`;
  const other = /Unable to create '(.+\.lock)': File exists/.exec(stderr);
  return other ? resolve(cwd, other[1] as string) : null;
}

/**
 * Called when `lockPath` was found taken, first at `since`: waits a moment and says whether to
 * ask again (false: give up). A config lock left stale is removed first.
 */
export async function awaitLockTurn(lockPath: string, since: number): Promise<boolean> {
  const configLock = lockPath.endsWith('config.lock');
  if (configLock && removeIfStale(lockPath)) return true;
  if (Date.now() - since > (configLock ? STALE_CONFIG_LOCK_MS + TURNS_MS : TURNS_MS)) return false;
  await new Promise((done) => setTimeout(done, 20 + Math.random() * 30));
  return true;
}

/**
 * Removes the lock when nobody has written it for `STALE_CONFIG_LOCK_MS`. It is moved aside
 * first and removed only if it is still the file found stale: another process clearing the same
 * lock may have let a new writer take it meanwhile, and that writer's lock goes back.
 */
function removeIfStale(lockPath: string): boolean {
  const found = statSync(lockPath, { throwIfNoEntry: false });
  if (!found || Date.now() - found.mtimeMs < STALE_CONFIG_LOCK_MS) return false;
  const aside = `${lockPath}.stale-${process.pid}-${found.ino}`;
  try {
    renameSync(lockPath, aside);
  } catch {
    return true; // gone already: ask again
  }
  if (statSync(aside).ino === found.ino) rmSync(aside, { force: true });
  else restore(aside, lockPath);
  return true;
}

function restore(aside: string, lockPath: string): void {
  try {
    linkSync(aside, lockPath);
  } catch {
    // a third writer holds the lock now: the one moved aside fails to commit, as if it lost the race
  }
  rmSync(aside, { force: true });
}
