import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { currentHolder } from '../core/event-store.js';
import { fileMergeLock } from './merge-lock.js';

const dir = () => mkdtempSync(join(tmpdir(), 'troupe-merge-lock-'));

/** Runs `fn` under the lock, noting when it entered and left, with a pause in between. */
function hold(lock: ReturnType<typeof fileMergeLock>, key: string, log: string[], name: string) {
  return lock.withMergeLock(key, async () => {
    log.push(`${name} in`);
    await new Promise((resolve) => setTimeout(resolve, 30));
    log.push(`${name} out`);
    return name;
  });
}

/** The name of the file a key's lock is held in. */
async function lockFile(lock: ReturnType<typeof fileMergeLock>, locks: string): Promise<string> {
  return lock.withMergeLock('k', async () => readdirSync(locks)[0]!);
}

describe('fileMergeLock', () => {
  it('one holder of a key at a time, across lock instances (processes) sharing the folder', async () => {
    const locks = dir();
    const log: string[] = [];
    const results = await Promise.all([
      hold(fileMergeLock(locks), 'origin main', log, 'a'),
      hold(fileMergeLock(locks), 'origin main', log, 'b'),
      hold(fileMergeLock(locks), 'origin main', log, 'c'),
    ]);
    expect(results).toEqual(['a', 'b', 'c']);
    for (let i = 0; i < log.length; i += 2) expect(log[i + 1]).toBe(log[i]!.replace(' in', ' out'));
    expect(readdirSync(locks)).toEqual([]);
  });

  it('a dead owner’s lock is taken over; a failing holder still lets the next one in', async () => {
    const locks = dir();
    const lock = fileMergeLock(locks, { timeoutMs: 5000 });
    const gone = await execa('node', ['-e', 'process.stdout.write(String(process.pid))']);
    const file = await lockFile(lock, locks);
    // an owner killed while holding it left its file behind
    writeFileSync(join(locks, file), JSON.stringify({ ...currentHolder(), pid: Number(gone.stdout) }));
    expect(readdirSync(locks)).toHaveLength(1);
    await expect(lock.withMergeLock('k', async () => Promise.reject(new Error('boom')))).rejects.toThrow(
      'boom',
    );
    expect(await lock.withMergeLock('k', async () => 'next')).toBe('next');
    expect(readdirSync(locks)).toEqual([]);
  });

  it('a live owner on this host is waited for, up to the timeout, with a clear error', async () => {
    const locks = dir();
    const lock = fileMergeLock(locks, { timeoutMs: 300 });
    const file = await lockFile(lock, locks);
    writeFileSync(join(locks, file), JSON.stringify({ ...currentHolder(), pid: process.ppid }));
    await expect(lock.withMergeLock('k', async () => 'never')).rejects.toThrow(
      `is still held by process ${process.ppid} on ${hostname()}`,
    );
  });
});
