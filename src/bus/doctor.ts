import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { messageOf } from '../core/errors.js';
import { parseRfc3339 } from './clock.js';
import { HUMAN } from './handle.js';
import {
  configPath,
  ensureMailbox,
  type Mailbox,
  mailbox,
  mailboxHandles,
  missingLeaves,
  readConfig,
  sessionRoots,
} from './layout.js';
import { isActive, readPresence } from './presence.js';
import type { ResolvedRoot } from './root.js';
import { type LockState, lockState, readWakeLock, removeStaleWakeLock } from './wake-lock.js';

export type CheckStatus = 'ok' | 'warn' | 'error';

export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
}

export interface MailboxOps {
  handle: string;
  unread_count: number;
  oldest_unread_age_s?: number;
  dlq_count: number;
  oldest_dlq_age_s?: number;
  presence_status?: string;
  presence_age_s?: number;
  presence_source?: 'recent_activity' | 'notifier_live';
  /** The session holding this mailbox; absent for the root itself. */
  session?: string;
  /** Its `troupe wake` lock, if any: `running`, `stale` (owner gone), `unverified` (another host). */
  wake?: { pid: number; state: LockState; started: string; pane?: string };
}

export interface DoctorReport {
  checks: Check[];
  mailboxes: Array<{ handle: string; complete: boolean; missing: string[] }>;
  summary: Record<CheckStatus, number>;
  ops?: {
    agents: MailboxOps[];
    operator_gate: { unread: number };
    hints: Array<{ code: string; detail: string }>;
    wakes: { running: number; stale: number };
    /** With `fixWakeLocks`: the stale locks removed (`session/handle`), after a re-check of each. */
    fixed_wake_locks?: string[];
  };
}

/** Health checks; never throws for what it finds (doctor exits 0 even when checks fail). */
export function doctor(
  resolved: ResolvedRoot,
  options: { ops?: boolean; fixMailboxes?: boolean; fixWakeLocks?: boolean } = {},
): DoctorReport {
  const { root } = resolved;
  const checks: Check[] = [];
  const add = (name: string, status: CheckStatus, detail: string) => checks.push({ name, status, detail });
  add('root_config', 'ok', `${root} (from ${resolved.source})`);
  for (const w of resolved.warnings) add('root_config', 'warn', w);
  let rootOk = false;
  try {
    const s = statSync(root);
    rootOk = s.isDirectory();
    if (!rootOk) add('root_directory', 'error', `${root} is not a directory`);
    else if (s.mode & 0o077)
      add(
        'root_directory',
        'warn',
        `${root} is accessible to group/others (mode ${(s.mode & 0o777).toString(8)})`,
      );
    else add('root_directory', 'ok', root);
  } catch {
    add('root_directory', 'error', `${root} does not exist`);
  }
  let agents: string[] = [];
  try {
    const config =
      readConfig(root) ?? (resolved.baseRoot !== root ? readConfig(resolved.baseRoot) : undefined);
    if (config) {
      agents = config.agents;
      add('config', 'ok', `${config.agents.length} agent(s): ${config.agents.join(', ')}`);
    } else {
      add('config', 'warn', `${configPath(root)} is missing`);
    }
  } catch (error) {
    add('config', 'error', messageOf(error));
  }
  const handles = [...new Set([...agents, HUMAN, ...(rootOk ? mailboxHandles(root) : [])])].sort();
  const mailboxes = handles.map((handle) => {
    const box = mailbox(root, handle);
    if (options.fixMailboxes && rootOk) ensureMailbox(box, true);
    const missing = missingLeaves(box);
    return { handle, complete: missing.length === 0, missing };
  });
  const incomplete = mailboxes.filter((m) => !m.complete);
  add(
    'mailboxes',
    incomplete.length === 0 ? 'ok' : 'error',
    incomplete.length === 0
      ? `${mailboxes.length} complete`
      : incomplete.map((m) => `${m.handle}: missing ${m.missing.join(', ')}`).join('; '),
  );
  const summary = { ok: 0, warn: 0, error: 0 };
  for (const c of checks) summary[c.status]++;
  const report: DoctorReport = { checks, mailboxes, summary };
  if (options.ops || options.fixWakeLocks) report.ops = ops(resolved, handles, options.fixWakeLocks === true);
  return report;
}

function ops(
  resolved: ResolvedRoot,
  handles: string[],
  fixWakeLocks: boolean,
): NonNullable<DoctorReport['ops']> {
  const now = Date.now();
  // a base root's sessions are where launched agents live: their backlog and wakes count too
  const sessions = resolved.root === resolved.baseRoot ? sessionRoots(resolved.root) : [];
  const boxes: Array<{ box: Mailbox; session?: string }> = [
    ...handles.map((handle) => ({ box: mailbox(resolved.root, handle) })),
    ...sessions.flatMap(([session, root]) =>
      mailboxHandles(root).map((handle) => ({ box: mailbox(root, handle), session })),
    ),
  ];
  const fixed = fixWakeLocks ? removeStaleLocks(boxes) : undefined;
  const agents = boxes.map(({ box, session }) => ({
    ...mailboxOps(box, now),
    ...(session ? { session } : {}),
  }));
  const hints: Array<{ code: string; detail: string }> = [];
  for (const a of agents) {
    if (a.unread_count > 0 && !a.presence_source && a.handle !== HUMAN) {
      hints.push({
        code: 'unread_backlog_no_notifier',
        detail: `${a.session ? `${a.session}/` : ''}${a.handle} has ${a.unread_count} unread, no running wake and no recent activity`,
      });
    }
  }
  if (process.env.AMQ_GLOBAL_ROOT)
    hints.push({ code: 'global_root_configured', detail: process.env.AMQ_GLOBAL_ROOT });
  for (const a of agents) {
    if (a.wake?.state === 'stale') {
      hints.push({
        code: 'stale_wake_lock',
        detail: `${a.session ? `${a.session}/` : ''}${a.handle}: wake pid ${a.wake.pid} is gone; \`troupe wake repair --me ${a.handle}\` starts a new one in its pane, \`troupe bus doctor --ops --fix-wake-locks\` removes the lock`,
      });
    }
  }
  const unreadForUser = agents.filter((a) => a.handle === HUMAN).reduce((n, a) => n + a.unread_count, 0);
  const wakes = {
    running: agents.filter((a) => a.wake?.state === 'running').length,
    stale: agents.filter((a) => a.wake?.state === 'stale').length,
  };
  return {
    agents,
    operator_gate: { unread: unreadForUser },
    hints,
    wakes,
    ...(fixed ? { fixed_wake_locks: fixed } : {}),
  };
}

/** Each stale lock, judged then removed only if a re-check still finds it stale (never an unverified one). */
function removeStaleLocks(boxes: Array<{ box: Mailbox; session?: string }>): string[] {
  const fixed: string[] = [];
  for (const { box, session } of boxes) {
    const lock = readWakeLock(box);
    if (!lock || lockState(lock) !== 'stale') continue;
    if (removeStaleWakeLock(box, lock) === 'removed')
      fixed.push(`${session ? `${session}/` : ''}${box.handle}`);
  }
  return fixed;
}

function mailboxOps(box: Mailbox, now: number): MailboxOps {
  const unread = ages(box.inboxNew, now);
  const dlq = ages(box.dlqNew, now);
  const p = readPresence(box);
  const seen = p ? parseRfc3339(p.last_seen ?? '') : undefined;
  const lock = readWakeLock(box);
  const wake = lock
    ? {
        pid: lock.pid,
        state: lockState(lock),
        started: lock.started,
        ...(lock.pane ? { pane: lock.pane } : {}),
      }
    : undefined;
  const source =
    wake?.state === 'running' ? 'notifier_live' : isActive(p, now) ? 'recent_activity' : undefined;
  return {
    handle: box.handle,
    unread_count: unread.length,
    ...(unread.length ? { oldest_unread_age_s: Math.max(...unread) } : {}),
    dlq_count: dlq.length,
    ...(dlq.length ? { oldest_dlq_age_s: Math.max(...dlq) } : {}),
    ...(p ? { presence_status: p.status } : {}),
    ...(seen !== undefined ? { presence_age_s: Math.round((now - Number(seen / 1_000_000n)) / 1000) } : {}),
    ...(source ? { presence_source: source } : {}),
    ...(wake ? { wake } : {}),
  };
}

function ages(dir: string, now: number): number[] {
  try {
    return readdirSync(dir)
      .filter((n) => n.endsWith('.md') && !n.startsWith('.'))
      .flatMap((n) => {
        try {
          return [Math.round((now - statSync(join(dir, n)).mtimeMs) / 1000)];
        } catch {
          return [];
        }
      });
  } catch {
    return [];
  }
}
