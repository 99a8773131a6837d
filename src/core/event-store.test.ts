import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { currentHolder, currentPidScope, isHolderAlive, isSameProcess } from './event-store.js';

/** A pid that ran here and has ended. */
const gonePid = () =>
  spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();

describe('the liveness of a lease holder', () => {
  const linux = process.platform === 'linux';

  it.runIf(linux)("records this process's boot id and PID namespace on Linux", () => {
    const scope = currentPidScope();
    expect(scope.bootId).toMatch(/^[0-9a-f-]{36}$/);
    expect(scope.pidNamespace).toMatch(/^pid:\[\d+\]$/);
    expect(currentHolder()).toEqual({ pid: process.pid, host: hostname(), ...scope });
  });

  it('judges a holder dead only when its pid is gone in this boot and PID namespace, on this host', () => {
    const pid = Number(gonePid());
    const here = { ...currentHolder(), pid };
    expect(isHolderAlive(currentHolder())).toBe(true);
    expect(isHolderAlive(here)).toBe(false);
    // the pid may be a live process elsewhere: alive until its lease expires
    expect(isHolderAlive({ ...here, host: 'another-host' })).toBe(true);
    expect(isHolderAlive({ ...here, pidNamespace: 'pid:[4026532000]' })).toBe(true);
    expect(isHolderAlive({ ...here, bootId: '00000000-0000-0000-0000-000000000000' })).toBe(true);
  });

  it.runIf(linux)('takes a holder recorded without its scope (an older troupe) to be alive', () => {
    expect(isHolderAlive({ pid: Number(gonePid()), host: hostname() })).toBe(true);
  });

  it('tells one process from another by pid, host, boot and namespace', () => {
    const me = currentHolder();
    expect(isSameProcess(me, { ...me, worker: 'w2' })).toBe(true);
    expect(isSameProcess(me, { ...me, pidNamespace: 'pid:[1]' })).toBe(false);
    expect(isSameProcess(me, { ...me, host: 'other' })).toBe(false);
    expect(isSameProcess(me, { ...me, pid: me.pid + 1 })).toBe(false);
  });
});
