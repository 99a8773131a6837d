import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { initRoot, mailbox } from '../../bus/layout.js';
import { wakeLockPath } from '../../bus/wake-lock.js';
import { Exit } from '../exit-codes.js';
import { doctor } from './bus/operations.js';
import { capturedIo } from './testing.js';
import { wakeCheck, wakeRecoverOwner, wakeRepair, wakeRetire } from './wake.js';

/** A pid that was this machine's and is gone. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid!;
}

function rootWithLock(lock: Record<string, unknown> | undefined): string {
  const root = join(mkdtempSync(join(tmpdir(), 'troupe-wake-ops-')), 'mail');
  initRoot(root, ['codex']);
  if (lock) {
    const path = wakeLockPath(mailbox(root, 'codex'));
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, JSON.stringify({ agent: 'codex', root, started: '2026-12-05T00:00:00Z', ...lock }));
  }
  return root;
}

async function check(root: string, extra: Record<string, string | boolean> = {}) {
  const io = capturedIo(root);
  expect(await wakeCheck({ root, me: 'codex', json: true, ...extra }, io)).toBe(Exit.ok);
  return JSON.parse(io.stdout());
}

describe('wake check and the lock operations without tmux', () => {
  beforeEach(() => {
    for (const name of ['AM_ROOT', 'AM_ME', 'AM_SESSION', 'AM_BASE_ROOT', 'TMUX_PANE', 'TROUPE_TMUX_SOCKET'])
      vi.stubEnv(name, undefined);
  });
  afterEach(() => void vi.unstubAllEnvs());

  it('no lock: a wake is started from the agent pane, so only there is it agent_safe', async () => {
    const root = rootWithLock(undefined);
    expect(await check(root)).toMatchObject({
      wake_status: 'missing',
      live_wake: false,
      restart_capability: 'operator_only',
      operator_terminal_required: true,
    });
    vi.stubEnv('TMUX_PANE', '%3');
    const v2 = await check(root, { jsonSchema: '2' });
    expect(v2).toMatchObject({
      schema: 2,
      restart_capability: 'agent_safe',
      action: { kind: 'start_wake', actor: 'agent' },
    });
    expect(v2.action.command.args.slice(-6)).toEqual(['wake', '--me', 'codex', '--root', root, '--detach']);
  });

  it('a dead owner without a pane: fix the lock, not repair; --fix-wake-locks removes it, recover-owner too', async () => {
    const root = rootWithLock({ pid: deadPid(), host: hostname() });
    const c = await check(root, { jsonSchema: '2' });
    expect(c).toMatchObject({
      wake: { status: 'stale', live: false },
      repair: { inject_via_available: false, reason_code: 'no_target' },
      restart_capability: 'agent_safe',
      action: { kind: 'fix_wake_locks', actor: 'agent' },
    });
    const repair = capturedIo(root);
    expect(await wakeRepair({ root, me: 'codex' }, repair)).toBe(Exit.actionRequired);
    expect(repair.stderr()).toMatch(/^troupe: wake repair refused \(no_target\): the wake had no pane\n$/);

    // doctor's schema 2 gives every lock wake check's contract
    const v2 = capturedIo(root);
    expect(await doctor({ root, ops: true, json: true, jsonSchema: '2' }, v2)).toBe(Exit.ok);
    expect(JSON.parse(v2.stdout())).toMatchObject({
      schema: 2,
      ops: {
        root: { path: root, source: 'flag' },
        wake_locks: [
          {
            agent: 'codex',
            status: 'stale',
            lock: wakeLockPath(mailbox(root, 'codex')),
            wake_check: { schema: 2, wake: { status: 'stale' }, action: { kind: 'fix_wake_locks' } },
          },
        ],
      },
    });
    expect(JSON.parse(v2.stdout()).ops).not.toHaveProperty('wakes');
    await expect(doctor({ root, ops: true, jsonSchema: '2' }, capturedIo(root))).rejects.toThrow(
      '--json-schema requires --json',
    );

    const fixed = capturedIo(root);
    expect(await doctor({ root, ops: true, fixWakeLocks: true, json: true, jsonSchema: '2' }, fixed)).toBe(
      Exit.ok,
    );
    // schema 2: the removed lock is a row of its own, and wake check now finds none
    expect(JSON.parse(fixed.stdout()).ops.wake_locks).toMatchObject([
      { agent: 'codex', status: 'stale', removed: true, wake_check: { wake: { status: 'missing' } } },
    ]);
    expect(existsSync(wakeLockPath(mailbox(root, 'codex')))).toBe(false);

    const again = rootWithLock({ pid: deadPid(), host: hostname() });
    const io = capturedIo(again);
    expect(await wakeRecoverOwner({ root: again, me: 'codex', json: true }, io)).toBe(Exit.ok);
    expect(JSON.parse(io.stdout())).toMatchObject({ result: 'released' });
    expect(existsSync(wakeLockPath(mailbox(again, 'codex')))).toBe(false);
  });

  it("another host's lock is unverified: left in place by every command, the operator's to confirm", async () => {
    const root = rootWithLock({ pid: 4242, host: 'elsewhere.example' });
    expect(await check(root)).toMatchObject({
      wake_status: 'unverified',
      restart_capability: 'operator_only',
    });
    const fixed = capturedIo(root);
    await doctor({ root, ops: true, fixWakeLocks: true, json: true }, fixed);
    expect(JSON.parse(fixed.stdout()).ops.fixed_wake_locks).toEqual([]);
    for (const op of [wakeRecoverOwner, wakeRetire]) {
      const io = capturedIo(root);
      expect(await op({ root, me: 'codex' }, io)).toBe(Exit.actionRequired);
      expect(io.stderr()).toMatch(/refused \(ownership_unproven\)/);
    }
    expect(existsSync(wakeLockPath(mailbox(root, 'codex')))).toBe(true);
  });

  it('a live process that is not a troupe wake for this agent is never signalled by retire', async () => {
    const root = rootWithLock({ pid: process.pid, host: hostname() });
    const io = capturedIo(root);
    expect(await wakeRetire({ root, me: 'codex' }, io)).toBe(Exit.actionRequired);
    expect(io.stderr()).toMatch(/refused \(identity_unconfirmed\)/);
  });

  it('refuses bad input with one line: --json-schema without --json, an unknown agent', async () => {
    const root = rootWithLock(undefined);
    await expect(wakeCheck({ root, me: 'codex', jsonSchema: '2' }, capturedIo(root))).rejects.toThrow(
      '--json-schema requires --json',
    );
    await expect(
      wakeCheck({ root, me: 'codex', json: true, jsonSchema: '3' }, capturedIo(root)),
    ).rejects.toThrow("--json-schema expects 1 or 2, got '3'");
    await expect(wakeCheck({ root, me: 'nobody' }, capturedIo(root))).rejects.toThrow(
      /no mailbox for nobody/,
    );
  });
});
