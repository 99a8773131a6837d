import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseHandle } from '../../bus/handle.js';
import { mailbox, sessionRoots } from '../../bus/layout.js';
import { resolveRoot } from '../../bus/root.js';
import { readWakeLock } from '../../bus/wake-lock.js';
import { NotFoundError, UsageError } from '../../core/errors.js';
import { shellQuote } from '../../live/launch.js';
import { spawnWake } from '../../live/spawn-wake.js';
import {
  checkWake,
  type ReleaseResult,
  recoverOwner,
  repairWake,
  retireWake,
  type WakeCheck,
  type WakeOpsContext,
} from '../../live/wake-ops.js';
import { packageRoot } from '../../package-root.js';
import type { CommandIo } from '../command-io.js';
import { Exit } from '../exit-codes.js';
import { troupeCommand } from '../self-command.js';
import { printJson } from './bus/context.js';

/** The flags of `wake check|repair|recover-owner|retire` (commander camel-cases them). */
export interface WakeOpsFlags {
  me?: string;
  root?: string;
  session?: string;
  json?: boolean;
  jsonSchema?: string;
  pane?: string;
}

/** The argv prefix that runs this very troupe, absolute (the commands a check names are run as they are). */
export function selfArgv(): string[] {
  return [process.execPath, join(packageRoot(), 'bin', 'troupe.js')];
}

function context(flags: WakeOpsFlags): WakeOpsContext {
  const raw = flags.me ?? process.env.AM_ME;
  if (!raw) throw new UsageError('--me is required (or set AM_ME)');
  const me = parseHandle(raw, '--me');
  if (flags.root && flags.session) throw new UsageError('--root and --session are exclusive');
  let root: string;
  if (flags.root) root = resolve(flags.root);
  else {
    const resolved = resolveRoot();
    root = flags.session ? join(resolved.baseRoot, parseHandle(flags.session, '--session')) : resolved.root;
  }
  const box = mailbox(root, me);
  if (!readWakeLock(box) && !existsDir(box.dir)) {
    throw new NotFoundError(`no mailbox for ${me} in ${root}`, { hint: sessionHint(root, me) });
  }
  return { root, me, self: selfArgv(), env: process.env };
}

function existsDir(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** At a base root, the sessions where this agent has a wake lock: where a launched agent's wake is. */
function sessionHint(root: string, me: string): string | undefined {
  const withLock = sessionRoots(root)
    .filter(([, r]) => readWakeLock(mailbox(r, me)))
    .map(([s]) => s);
  return withLock.length ? `${me} has a wake in session ${withLock.join(', ')}: pass --session` : undefined;
}

/** An argv as the user types it: this troupe's command, then the arguments quoted for a shell. */
function typed(argv: string[]): string {
  const self = selfArgv();
  const own = self.every((word, i) => argv[i] === word);
  return own
    ? [troupeCommand(), ...argv.slice(self.length).map(shellQuote)].join(' ')
    : argv.map(shellQuote).join(' ');
}

/** `--json-schema 1|2` (AMQ's): 2 is the closed action/actor/reason form; it needs --json. */
export function jsonSchema(flags: { json?: boolean; jsonSchema?: string }): 1 | 2 {
  if (flags.jsonSchema === undefined) return 1;
  if (flags.jsonSchema !== '1' && flags.jsonSchema !== '2')
    throw new UsageError(`--json-schema expects 1 or 2, got '${flags.jsonSchema}'`);
  if (!flags.json) throw new UsageError('--json-schema requires --json');
  return flags.jsonSchema === '2' ? 2 : 1;
}

/** Schema 1: AMQ's flat fields (`can_repair_inject_via` meaning: `wake repair` would act). */
export function checkV1(c: WakeCheck) {
  return {
    schema: 1,
    agent: c.agent,
    root: c.root,
    can_start_here: c.can_start_here,
    start_mode: c.can_start_here ? 'tmux' : 'none',
    live_wake: c.status === 'valid',
    wake_status: c.status,
    ...(c.pid !== undefined && c.pid > 0 ? { wake_pid: c.pid } : {}),
    ...(c.status !== 'missing' ? { wake_mode: 'tmux' } : {}),
    ...(c.pane ? { wake_pane: c.pane } : {}),
    owner_bound: false,
    can_repair_inject_via: c.repair.available,
    ...(c.repair.reason_code ? { repair_reason: c.repair.detail ?? c.repair.reason_code } : {}),
    restart_capability: c.restart_capability,
    operator_terminal_required: c.action.terminal_required,
    next_action: c.action.argv ? typed(c.action.argv) : c.action.message,
  };
}

/** Schema 2: AMQ's machine-stable contract; a program and its args, never prose to parse. */
export function checkV2(c: WakeCheck) {
  return {
    schema: 2,
    agent: c.agent,
    root: c.root,
    start: {
      available: c.can_start_here,
      mode: c.can_start_here ? 'tmux' : 'none',
      reason_code: c.can_start_here ? null : 'owning_terminal_required',
    },
    wake: {
      status: c.status,
      live: c.status === 'valid',
      pid: c.pid !== undefined && c.pid > 0 ? c.pid : null,
      mode: c.status === 'missing' ? null : 'tmux',
      pane: c.pane ?? null,
      owner_bound: false,
      target_present: c.target_present,
    },
    repair: {
      inject_via_available: c.repair.available,
      reason_code: c.repair.reason_code,
      detail: c.repair.detail,
    },
    restart_capability: c.restart_capability,
    action: {
      kind: c.action.kind,
      actor: c.action.actor,
      reason_code: c.action.reason_code,
      terminal_required: c.action.terminal_required,
      command: c.action.argv ? { program: c.action.argv[0]!, args: c.action.argv.slice(1) } : null,
      message: c.action.message,
    },
  };
}

export async function wakeCheck(flags: WakeOpsFlags, io: CommandIo): Promise<number> {
  const schema = jsonSchema(flags);
  const check = checkWake(context(flags));
  if (flags.json) printJson(io, schema === 2 ? checkV2(check) : checkV1(check));
  else {
    const v1 = checkV1(check);
    const who =
      check.pid !== undefined ? ` (pid ${check.pid}${check.pane ? `, pane ${check.pane}` : ''})` : '';
    io.out(`wake for ${check.agent} in ${check.root}: ${check.status}${who}\n`);
    if (check.repair.reason_code) io.out(`repair: ${check.repair.detail ?? check.repair.reason_code}\n`);
    io.out(`restart_capability: ${check.restart_capability}\n`);
    io.out(`next: ${v1.next_action}\n`);
  }
  return Exit.ok;
}

export async function wakeRepair(flags: WakeOpsFlags, io: CommandIo): Promise<number> {
  const ctx = context(flags);
  const result = await repairWake(ctx, ({ root, me, pane, env }) => spawnWake({ root, me, pane, env }));
  if (flags.json) printJson(io, { agent: ctx.me, root: ctx.root, ...result });
  else if (result.result === 'repaired')
    io.out(`wake for ${ctx.me} repaired: pid ${result.pid} in pane ${result.pane}\n`);
  else if (result.result === 'not_needed')
    io.out(`wake for ${ctx.me} runs (pid ${result.pid}): nothing to repair\n`);
  else io.err(`troupe: wake repair refused (${result.reason_code}): ${result.detail}\n`);
  return result.result === 'refused' ? Exit.actionRequired : Exit.ok;
}

export async function wakeRecoverOwner(flags: WakeOpsFlags, io: CommandIo): Promise<number> {
  const ctx = context(flags);
  return report(ctx, await recoverOwner(ctx), flags, io, 'recover-owner');
}

export async function wakeRetire(flags: WakeOpsFlags, io: CommandIo): Promise<number> {
  const ctx = context(flags);
  return report(ctx, await retireWake(ctx, flags.pane ? { pane: flags.pane } : {}), flags, io, 'retire');
}

/** refused exits 6 (an operator has to act); retired_with_residue is a success with a warning (AMQ). */
function report(
  ctx: WakeOpsContext,
  r: ReleaseResult,
  flags: WakeOpsFlags,
  io: CommandIo,
  verb: string,
): number {
  if (flags.json) printJson(io, { agent: ctx.me, root: ctx.root, ...r });
  else if (r.result === 'refused') io.err(`troupe: wake ${verb} refused (${r.reason_code}): ${r.detail}\n`);
  else if (r.result === 'none') io.out(`no wake lock for ${ctx.me}: nothing to release\n`);
  else io.out(`wake for ${ctx.me}${r.pid ? ` (pid ${r.pid})` : ''}: ${r.result}\n`);
  if (r.result === 'retired_with_residue') io.err(`troupe: warning: ${r.detail}\n`);
  return r.result === 'refused' ? Exit.actionRequired : Exit.ok;
}
