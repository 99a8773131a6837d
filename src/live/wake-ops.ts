import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Mailbox, mailbox } from '../bus/layout.js';
import {
  lockState,
  processStart,
  readWakeLock,
  removeStaleWakeLock,
  type WakeLock,
  wakeLockPath,
} from '../bus/wake-lock.js';
import { Tmux } from './tmux.js';

/**
 * AMQ's wake lifecycle commands over troupe's wakes (docs/live.md, "When a wake dies"): `check`
 * (read-only: the state, who may act, the exact next command), `repair` (a new wake in the dead
 * one's pane), `recover-owner` (release one lock: a dead owner's, or a live one from its own
 * pane), `retire` (stop an identity-confirmed live wake). Every mutation re-reads the lock first.
 */

/** AMQ's lock states: `valid` is a running owner, `unverified` one troupe cannot prove either way. */
export type WakeStatus = 'missing' | 'valid' | 'stale' | 'unverified';
export type RestartCapability = 'agent_safe' | 'operator_only' | 'unavailable';
export type ActionKind = 'none' | 'start_wake' | 'repair' | 'fix_wake_locks' | 'inspect';

export interface WakeAction {
  kind: ActionKind;
  actor: 'agent' | 'operator' | 'none';
  reason_code: string;
  terminal_required: boolean;
  /** The exact argv to run, when there is one. */
  argv: string[] | null;
  message: string;
}

export interface WakeCheck {
  agent: string;
  root: string;
  status: WakeStatus;
  lock_path: string;
  pid?: number;
  pane?: string;
  started?: string;
  /** Whether this process could start a wake with notices (it runs in a tmux pane). */
  can_start_here: boolean;
  /** The saved target (the dead wake's pane) is still there. */
  target_present: boolean;
  repair: { available: boolean; reason_code: string | null; detail: string | null };
  restart_capability: RestartCapability;
  action: WakeAction;
}

export interface WakeOpsContext {
  root: string;
  me: string;
  /** The argv prefix that runs this troupe (absolute node and bin), for the commands the check names. */
  self: string[];
  env: NodeJS.ProcessEnv;
}

/** Read-only: what the agent's wake is, and what may be done about it, by whom. */
export function checkWake(ctx: WakeOpsContext): WakeCheck {
  const box = mailbox(ctx.root, ctx.me);
  const lock = readWakeLock(box);
  const base = {
    agent: ctx.me,
    root: ctx.root,
    lock_path: wakeLockPath(box),
    can_start_here: Boolean(ctx.env.TMUX_PANE),
  };
  const run = (...args: string[]) => [...ctx.self, ...args];
  if (!lock) {
    const here = base.can_start_here;
    return {
      ...base,
      status: 'missing',
      target_present: false,
      repair: { available: false, reason_code: 'no_wake_lock', detail: null },
      restart_capability: here ? 'agent_safe' : 'operator_only',
      action: {
        kind: 'start_wake',
        actor: here ? 'agent' : 'operator',
        reason_code: here ? 'wake_missing_start_available' : 'owning_terminal_required',
        terminal_required: !here,
        argv: run('wake', '--me', ctx.me, '--root', ctx.root, '--detach'),
        message: here
          ? 'no wake runs: start one for this pane'
          : "no wake runs: start one from the agent's tmux pane, or `session resume` its session (it restarts dead wakes)",
      },
    };
  }
  const state = lockState(lock);
  const known = {
    ...base,
    pid: lock.pid,
    ...(lock.pane ? { pane: lock.pane } : {}),
    ...(lock.started ? { started: lock.started } : {}),
  };
  if (state === 'running') {
    return {
      ...known,
      status: 'valid',
      target_present: lock.pane ? paneAlive(lock) : false,
      repair: { available: false, reason_code: 'wake_live', detail: null },
      restart_capability: 'operator_only',
      action: {
        kind: 'none',
        actor: 'none',
        reason_code: 'wake_live',
        terminal_required: false,
        argv: null,
        message: `wake pid ${lock.pid} runs; leave it (replacing it is the operator's call: \`wake retire\`)`,
      },
    };
  }
  if (state === 'unverified') {
    return {
      ...known,
      status: 'unverified',
      target_present: false,
      repair: {
        available: false,
        reason_code: 'ownership_unproven',
        detail: lock.pid === 0 ? 'the lock is being written' : `its owner runs on host ${lock.host}`,
      },
      restart_capability: 'operator_only',
      action: {
        kind: 'inspect',
        actor: 'operator',
        reason_code: 'ownership_unproven',
        terminal_required: true,
        argv: null,
        message: `troupe cannot prove the owner of ${known.lock_path} gone: confirm by hand before removing it`,
      },
    };
  }
  const present = lock.pane !== undefined && paneAlive(lock);
  return {
    ...known,
    status: 'stale',
    target_present: present,
    repair: present
      ? { available: true, reason_code: null, detail: null }
      : {
          available: false,
          reason_code: lock.pane ? 'target_gone' : 'no_target',
          detail: lock.pane ? `tmux pane ${lock.pane} is gone` : 'the wake had no pane',
        },
    restart_capability: 'agent_safe',
    action: present
      ? {
          kind: 'repair',
          actor: 'agent',
          reason_code: 'stale_lock_target_present',
          terminal_required: false,
          argv: run('wake', 'repair', '--me', ctx.me, '--root', ctx.root),
          message: `wake pid ${lock.pid} died while pane ${lock.pane} lives: repair starts a new one there`,
        }
      : {
          kind: 'fix_wake_locks',
          actor: 'agent',
          reason_code: 'stale_lock_target_gone',
          terminal_required: false,
          argv: run('bus', 'doctor', '--ops', '--fix-wake-locks', '--root', ctx.root),
          message: `wake pid ${lock.pid} died and its pane is gone: remove the lock`,
        },
  };
}

function paneAlive(lock: WakeLock): boolean {
  return new Tmux(lock.tmux_socket).paneAlive(lock.pane!);
}

export type RepairResult =
  | { result: 'repaired'; pid: number; pane: string }
  | { result: 'not_needed'; pid: number }
  | { result: 'refused'; reason_code: string; detail: string };

/**
 * A new wake in the dead wake's pane. It takes the stale lock over and, finding the old owner
 * dead, announces the mail that came while no wake ran (troupe's repair floor: every unread
 * message, not only those since the death).
 */
export async function repairWake(
  ctx: WakeOpsContext,
  start: (input: { root: string; me: string; pane: string; env: NodeJS.ProcessEnv }) => void,
): Promise<RepairResult> {
  const check = checkWake(ctx);
  if (check.status === 'valid') return { result: 'not_needed', pid: check.pid! };
  if (check.status !== 'stale' || !check.repair.available) {
    return {
      result: 'refused',
      reason_code: check.repair.reason_code ?? check.action.reason_code,
      detail: check.repair.detail ?? check.action.message,
    };
  }
  const lock = readWakeLock(mailbox(ctx.root, ctx.me))!;
  start({
    root: ctx.root,
    me: ctx.me,
    pane: lock.pane!,
    // the pane is on the dead wake's tmux server, whatever this shell's is
    env: { ...ctx.env, ...(lock.tmux_socket ? { TROUPE_TMUX_SOCKET: lock.tmux_socket } : {}) },
  });
  const box = mailbox(ctx.root, ctx.me);
  for (let i = 0; i < 100; i++) {
    const now = readWakeLock(box);
    if (now && now.pid !== lock.pid && lockState(now) === 'running')
      return { result: 'repaired', pid: now.pid, pane: lock.pane! };
    await sleep(100);
  }
  return {
    result: 'refused',
    reason_code: 'replacement_not_running',
    detail: `the new wake did not take the lock within 10 s; see ${box.dir}/extensions/troupe/wake.log`,
  };
}

export type ReleaseResult =
  | { result: 'retired' | 'released' | 'retired_with_residue' | 'none'; pid?: number; detail?: string }
  | { result: 'refused'; reason_code: string; detail: string; pid?: number };

/**
 * `wake recover-owner`: a dead owner's lock is removed outright; a live owner is released only
 * from its own pane (the caller's TMUX_PANE is the lock's). No force mode.
 */
export async function recoverOwner(ctx: WakeOpsContext): Promise<ReleaseResult> {
  const box = mailbox(ctx.root, ctx.me);
  const lock = readWakeLock(box);
  if (!lock) return { result: 'none' };
  const state = lockState(lock);
  if (state === 'stale') return removeDead(box, lock, 'released');
  if (state === 'unverified')
    return {
      result: 'refused',
      reason_code: 'ownership_unproven',
      detail: 'the owner cannot be proven gone',
      pid: lock.pid,
    };
  if (!lock.pane || ctx.env.TMUX_PANE !== lock.pane) {
    return {
      result: 'refused',
      reason_code: 'not_owner',
      detail: `wake pid ${lock.pid} is live and owned by tmux pane ${lock.pane ?? '(none)'}: release it from there, or \`wake retire\` it`,
      pid: lock.pid,
    };
  }
  return stopLive(box, lock, 'released');
}

/**
 * `wake retire`: stops a live wake only when its identity is confirmed — the same process (start
 * time), running `troupe wake` for this agent and root, with the expected pane if one is given —
 * or removes a stale lock without signalling anything.
 */
export async function retireWake(ctx: WakeOpsContext, expect: { pane?: string }): Promise<ReleaseResult> {
  const box = mailbox(ctx.root, ctx.me);
  const lock = readWakeLock(box);
  if (!lock) return { result: 'refused', reason_code: 'no_wake_lock', detail: `no wake lock for ${ctx.me}` };
  if (expect.pane !== undefined && expect.pane !== lock.pane) {
    return {
      result: 'refused',
      reason_code: 'target_mismatch',
      detail: `the wake's pane is ${lock.pane ?? '(none)'}, not ${expect.pane}`,
      pid: lock.pid,
    };
  }
  const state = lockState(lock);
  if (state === 'stale') return removeDead(box, lock, 'retired');
  if (state === 'unverified')
    return {
      result: 'refused',
      reason_code: 'ownership_unproven',
      detail: 'the owner cannot be proven',
      pid: lock.pid,
    };
  const mismatch = identityMismatch(lock, ctx);
  if (mismatch)
    return { result: 'refused', reason_code: 'identity_unconfirmed', detail: mismatch, pid: lock.pid };
  return stopLive(box, lock, 'retired');
}

/** Why `lock.pid` cannot be confirmed as the wake for this agent and root (Linux /proc), if it cannot. */
function identityMismatch(lock: WakeLock, ctx: WakeOpsContext): string | undefined {
  const path = `/proc/${lock.pid}/cmdline`;
  if (!existsSync(path)) return `cannot read ${path}: stop the wake from its terminal`;
  if (lock.process_start === undefined || processStart(lock.pid) !== lock.process_start)
    return `pid ${lock.pid} is not the process that took the lock`;
  const argv = readFileSync(path, 'utf8').split('\0');
  const at = argv.indexOf('wake');
  const after = at < 0 ? [] : argv.slice(at + 1);
  const flag = (name: string) => {
    const i = after.indexOf(name);
    return i < 0 ? undefined : after[i + 1];
  };
  if (at < 0 || flag('--me') !== ctx.me || flag('--root') !== ctx.root)
    return `pid ${lock.pid} does not run \`troupe wake --me ${ctx.me} --root ${ctx.root}\` (a wake started by hand: stop it from its terminal)`;
  return undefined;
}

function removeDead(box: Mailbox, lock: WakeLock, done: 'retired' | 'released'): ReleaseResult {
  const removed = removeStaleWakeLock(box, lock);
  if (removed === 'kept')
    return {
      result: 'refused',
      reason_code: 'lock_replaced',
      detail: 'a new wake took the lock meanwhile',
      pid: lock.pid,
    };
  return { result: done, pid: lock.pid };
}

/** SIGTERM, then up to 5 s for the process to go; a lock it left behind is removed after. */
async function stopLive(box: Mailbox, lock: WakeLock, done: 'retired' | 'released'): Promise<ReleaseResult> {
  try {
    process.kill(lock.pid, 'SIGTERM');
  } catch {
    // gone already: what is left is a stale lock
  }
  for (let i = 0; i < 50 && alive(lock); i++) await sleep(100);
  if (alive(lock))
    return {
      result: 'refused',
      reason_code: 'still_running',
      detail: `pid ${lock.pid} did not stop within 5 s`,
      pid: lock.pid,
    };
  const left = readWakeLock(box);
  if (left && left.pid === lock.pid && removeStaleWakeLock(box, left) !== 'removed')
    return {
      result: 'retired_with_residue',
      pid: lock.pid,
      detail: `${wakeLockPath(box)} could not be removed`,
    };
  return { result: done, pid: lock.pid };
}

function alive(lock: WakeLock): boolean {
  return lockState(lock) === 'running';
}
