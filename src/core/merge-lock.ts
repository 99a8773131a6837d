/**
 * Merges into a base branch are made by one worker at a time: `withMergeLock(key, fn)` runs `fn`
 * while holding the lock named `key` (the remote and base branch, e.g. `<url> main`), waiting for
 * another holder to finish first.
 *
 * The lock is advisory and only saves work: the merge itself is guarded by git, which refuses a
 * push that is not a fast-forward of what it replaces (workspace/remote-workspace.ts), so two
 * workers racing without a shared lock still make exactly one merge. The local implementation is
 * a lock file (workspace/merge-lock.ts); with tasks in PostgreSQL, the store's advisory lock for
 * the key is held around `fn` too (store/advisory-merge-lock.ts), so workers on many machines take turns.
 */
export interface MergeLock {
  withMergeLock<T>(key: string, fn: () => Promise<T>): Promise<T>;
}
