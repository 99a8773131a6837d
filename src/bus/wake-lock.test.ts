import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mailbox } from './layout.js';
import { acquireWakeLock, lockState, readWakeLock, releaseWakeLock, wakeLockPath } from './wake-lock.js';

const fields = { agent: 'codex', root: '/r' };

function box() {
  const b = mailbox(mkdtempSync(join(tmpdir(), 'troupe-wakelock-')), 'codex');
  mkdirSync(dirname(wakeLockPath(b)), { recursive: true });
  return b;
}

/** The pid of a process that has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

describe('the wake lock', () => {
  it('is held by one process: a second taker sees the owner', () => {
    const b = box();
    const first = acquireWakeLock(b, fields);
    expect(first.acquired).toBe(true);
    const second = acquireWakeLock(b, fields);
    expect(second).toMatchObject({ acquired: false, owner: { pid: process.pid } });
    releaseWakeLock(b);
    expect(readWakeLock(b)).toBeUndefined();
  });

  it("takes over a dead owner's lock, and one whose pid now belongs to another process", () => {
    const b = box();
    const stale = { ...fields, pid: deadPid(), host: hostname(), started: 'x' };
    writeFileSync(wakeLockPath(b), JSON.stringify(stale));
    expect(lockState(readWakeLock(b)!)).toBe('stale');
    expect(acquireWakeLock(b, fields)).toMatchObject({ acquired: true, lock: { pid: process.pid } });
    if (process.platform === 'linux') {
      writeFileSync(wakeLockPath(b), JSON.stringify({ ...stale, pid: process.pid, process_start: '1' }));
      expect(lockState(readWakeLock(b)!)).toBe('stale');
    }
  });

  it('leaves a torn lock alone while it may be mid-write, and takes it once old', () => {
    const b = box();
    writeFileSync(wakeLockPath(b), '');
    expect(lockState(readWakeLock(b)!)).toBe('unverified');
    expect(acquireWakeLock(b, fields).acquired).toBe(false);
    utimesSync(wakeLockPath(b), new Date(Date.now() - 10_000), new Date(Date.now() - 10_000));
    expect(acquireWakeLock(b, fields).acquired).toBe(true);
  });

  it('cannot verify an owner on another host', () => {
    expect(lockState({ ...fields, pid: process.pid, host: 'elsewhere', started: 'x' })).toBe('unverified');
  });
});
