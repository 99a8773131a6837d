import { createHash } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StateError } from '../core/errors.js';
import { currentHolder, isHolderAlive, isSameProcess, type LeaseHolder } from '../core/event-store.js';
import type { MergeLock } from '../core/merge-lock.js';
import { takingTurns } from './turns.js';

/**
 * The local MergeLock (core/merge-lock.ts): one lock file per key in `dir`, created exclusively,
 * holding its owner's pid, host and pid scope. An owner that died (its pid is gone on this host,
 * in this PID namespace) is taken over; one on another host or namespace is waited for. Within a process the holders of a key take turns too.
 * This serializes merges on one machine; across machines git's refusal of a non-fast-forward push
 * is the guard, and with tasks in PostgreSQL its advisory lock (store/advisory-merge-lock.ts).
 */
export function fileMergeLock(dir: string, options: { timeoutMs?: number } = {}): MergeLock {
  const inTurn = takingTurns();
  const timeoutMs = options.timeoutMs ?? 120_000;
  return {
    withMergeLock: (key, fn) => inTurn(key, () => holdFile(dir, key, timeoutMs, fn)),
  };
}

async function holdFile<T>(dir: string, key: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `merge-${createHash('sha256').update(key).digest('hex').slice(0, 16)}.lock`);
  const deadline = Date.now() + timeoutMs;
  while (!tryTake(path, key)) {
    if (Date.now() > deadline) {
      throw new StateError(`the merge lock ${path} is still held by ${ownerOf(path) ?? 'another process'}`, {
        hint: 'wait for that merge to finish; remove the file if its owner is gone',
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 25 + Math.random() * 50));
  }
  try {
    return await fn();
  } finally {
    rmSync(path, { force: true });
  }
}

function tryTake(path: string, key: string): boolean {
  try {
    writeFileSync(path, `${JSON.stringify({ ...currentHolder(), key })}\n`, { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const owner = readOwner(path);
  if (owner ? isHolderAlive(owner) : young(path)) return false;
  // one taker wins the rename; a lock someone took in between (not the dead owner's) goes back
  const aside = `${path}.dead-${process.pid}`;
  try {
    renameSync(path, aside);
  } catch {
    return false;
  }
  const moved = readOwner(aside);
  if (moved && !(owner && isSameProcess(moved, owner))) {
    try {
      linkSync(aside, path);
    } catch {}
  }
  rmSync(aside, { force: true });
  return false;
}

/** A lock file without a readable owner is being written while it is young; older, it is torn. */
function young(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs < 2000;
  } catch {
    return true;
  }
}

function readOwner(path: string): LeaseHolder | null {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<LeaseHolder>;
    if (typeof parsed.pid !== 'number' || typeof parsed.host !== 'string') return null;
    const { bootId, pidNamespace } = parsed;
    return {
      pid: parsed.pid,
      host: parsed.host,
      ...(typeof bootId === 'string' ? { bootId } : {}),
      ...(typeof pidNamespace === 'string' ? { pidNamespace } : {}),
    };
  } catch {
    return null;
  }
}

function ownerOf(path: string): string | null {
  const owner = readOwner(path);
  return owner ? `process ${owner.pid} on ${owner.host}` : null;
}
