import { StateError } from '../core/errors.js';
import type { EventStore } from '../core/event-store.js';
import type { MergeLock } from '../core/merge-lock.js';

/**
 * The MergeLock shared by every worker of a store that has advisory locks (PostgreSQL): inside the
 * local lock (one merge at a time on this machine, so this process never takes its own session's
 * lock twice), the store's lock for the same key, waited for by polling so that other calls on the
 * store's one connection go on meanwhile. A store without advisory locks gets the local lock alone.
 */
export function advisoryMergeLock(
  store: EventStore,
  local: MergeLock,
  options: { timeoutMs?: number; pollMs?: number } = {},
): MergeLock {
  const tryAdvisoryLock = store.tryAdvisoryLock?.bind(store);
  const advisoryUnlock = store.advisoryUnlock?.bind(store);
  if (!tryAdvisoryLock || !advisoryUnlock) return local;
  const timeoutMs = options.timeoutMs ?? 120_000;
  const pollMs = options.pollMs ?? 100;
  return {
    withMergeLock: (key, fn) =>
      local.withMergeLock(key, async () => {
        const deadline = Date.now() + timeoutMs;
        while (!tryAdvisoryLock(key)) {
          if (Date.now() > deadline) {
            throw new StateError(
              `another worker has held the merge lock for ${key} for ${timeoutMs / 1000} s`,
              {
                hint: 'wait for its merge to finish, or look for a stuck worker with `troupe workers`',
              },
            );
          }
          await new Promise((resolve) => setTimeout(resolve, pollMs * (0.5 + Math.random())));
        }
        try {
          return await fn();
        } finally {
          advisoryUnlock(key);
        }
      }),
  };
}
