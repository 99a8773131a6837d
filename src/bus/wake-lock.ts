import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { rfc3339 } from './clock.js';
import { errno, writeExclusive } from './durable.js';
import { goJson } from './go-json.js';
import type { Mailbox } from './layout.js';

/**
 * One `troupe wake` per agent: `agents/<h>/extensions/troupe/wake.lock` holds its owner. It lives
 * in the extension namespace AMQ reserves for other layers (AMQ never reads or cleans it), so it
 * is never mistaken for AMQ's own `.wake.lock`, whose many fields troupe does not fill.
 */
export interface WakeLock {
  pid: number;
  /** The owner's start time in clock ticks since boot (Linux /proc), so a reused pid is not taken for it. */
  process_start?: string;
  host: string;
  agent: string;
  root: string;
  started: string;
  /** Where notices go: a tmux pane id, or none. */
  pane?: string;
  tmux_socket?: string;
}

export type LockState = 'running' | 'stale' | 'unverified';

export function wakeLockPath(box: Mailbox): string {
  return join(box.dir, 'extensions', 'troupe', 'wake.lock');
}

/** A lock file that is not a lock: pid -1 (stale), or 0 while it is young enough to be mid-write. */
const NOT_A_LOCK = { host: '', agent: '', root: '', started: '' };

export function readWakeLock(box: Mailbox): WakeLock | undefined {
  const path = wakeLockPath(box);
  try {
    const raw = JSON.parse(readFileSync(path, 'utf8')) as WakeLock;
    if (typeof raw?.pid === 'number') return raw;
  } catch (error) {
    if (errno(error) === 'ENOENT') return undefined;
  }
  try {
    return { ...NOT_A_LOCK, pid: Date.now() - statSync(path).mtimeMs < 2000 ? 0 : -1 };
  } catch {
    return undefined;
  }
}

/** `/proc/<pid>/stat` field 22 (starttime), or undefined off Linux or for a gone process. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) may hold spaces and parentheses: count from the last ')'
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Whether the lock's owner is alive: `unverified` when it is on another host. */
export function lockState(lock: WakeLock): LockState {
  if (lock.pid === 0) return 'unverified';
  if (lock.pid < 0) return 'stale';
  if (lock.host !== hostname()) return 'unverified';
  try {
    process.kill(lock.pid, 0);
  } catch (error) {
    if (errno(error) === 'ESRCH') return 'stale';
  }
  if (lock.process_start !== undefined) {
    const now = processStart(lock.pid);
    if (now !== undefined && now !== lock.process_start) return 'stale';
  }
  return 'running';
}

export type Acquired = { acquired: true; lock: WakeLock } | { acquired: false; owner: WakeLock };

/**
 * Takes the lock for this process: created exclusively; a stale owner's lock is first renamed
 * aside (one taker wins the rename) and checked to be the one judged stale, so a lock another
 * taker created in between is put back, never stolen.
 */
export function acquireWakeLock(box: Mailbox, fields: Omit<WakeLock, 'pid' | 'host' | 'started'>): Acquired {
  const path = wakeLockPath(box);
  const dir = join(box.dir, 'extensions', 'troupe');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const start = processStart(process.pid);
  const lock: WakeLock = {
    pid: process.pid,
    ...(start !== undefined ? { process_start: start } : {}),
    host: hostname(),
    started: rfc3339(),
    ...fields,
  };
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      writeExclusive(dir, 'wake.lock', Buffer.from(`${goJson(lock)}\n`));
      return { acquired: true, lock };
    } catch (error) {
      if (errno(error) !== 'EEXIST') throw error;
    }
    const owner = readWakeLock(box);
    if (!owner) continue;
    if (lockState(owner) !== 'stale') return { acquired: false, owner };
    const aside = `${path}.stale-${process.pid}`;
    try {
      renameSync(path, aside);
    } catch (error) {
      if (errno(error) === 'ENOENT') continue;
      throw error;
    }
    const moved = safeRead(aside);
    if (moved && moved.pid !== owner.pid) {
      // we moved a lock someone else just took: give it back (no-replace), and let them have it
      try {
        linkSync(aside, path);
      } catch {
        // a third lock is there now: ours to contest on the next turn
      }
      rmSync(aside, { force: true });
      return { acquired: false, owner: moved };
    }
    rmSync(aside, { force: true });
  }
  const owner = readWakeLock(box) ?? lock;
  return { acquired: false, owner };
}

function safeRead(path: string): WakeLock | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as WakeLock;
  } catch {
    return undefined;
  }
}

/**
 * `doctor --ops --fix-wake-locks` and `wake retire`/`recover-owner`: removes the lock only if it is
 * still the one judged stale (same pid, still stale on a re-check). Renamed aside first, so a lock
 * a new wake took in between is put back, never removed.
 */
export function removeStaleWakeLock(box: Mailbox, judged: WakeLock): 'removed' | 'kept' | 'gone' {
  const path = wakeLockPath(box);
  const now = readWakeLock(box);
  if (!now) return 'gone';
  if (now.pid !== judged.pid || lockState(now) !== 'stale') return 'kept';
  const aside = `${path}.fix-${process.pid}`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if (errno(error) === 'ENOENT') return 'gone';
    throw error;
  }
  const moved = safeRead(aside);
  if (moved && moved.pid !== judged.pid) {
    try {
      linkSync(aside, path);
    } catch {
      // a third lock is there now: it stays
    }
    rmSync(aside, { force: true });
    return 'kept';
  }
  rmSync(aside, { force: true });
  return 'removed';
}

/** Removes the lock if this process still owns it. */
export function releaseWakeLock(box: Mailbox): void {
  const lock = readWakeLock(box);
  if (lock?.pid === process.pid && lock.host === hostname()) rmSync(wakeLockPath(box), { force: true });
}
