import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { openBus } from '../../../bus/bus.js';
import { cleanupTmp, cleanupWakeQuarantine } from '../../../bus/cleanup.js';
import { isTruncated } from '../../../bus/dlq.js';
import { type DoctorReport, doctor as runDoctor } from '../../../bus/doctor.js';
import { parseDuration } from '../../../bus/duration.js';
import { mailbox } from '../../../bus/layout.js';
import { DEFAULT_DIR, gitTop, type ResolvedRoot, resolveRoot } from '../../../bus/root.js';
import { wakeLockPath } from '../../../bus/wake-lock.js';
import { UsageError } from '../../../core/errors.js';
import { clearLaunchJournal } from '../../../live/launch-plan.js';
import { checkWake } from '../../../live/wake-ops.js';
import type { CommandIo } from '../../command-io.js';
import { Exit } from '../../exit-codes.js';
import { checkV2, jsonSchema, selfArgv } from '../wake.js';
import { type BusFlags, printJson, splitList, warn } from './context.js';
import { me, openFromFlags } from './open.js';

export async function init(flags: BusFlags, io: CommandIo): Promise<number> {
  const cwd = io.cwd;
  const given = flags.root ?? process.env.AM_ROOT;
  let root: string;
  if (given) root = resolve(cwd, given);
  else {
    try {
      root = resolveRoot().root;
    } catch {
      root = join(gitTop(cwd) ?? cwd, DEFAULT_DIR);
    }
  }
  const bus = openBus(root);
  const result = bus.init(splitList(flags.agents), flags.force === true);
  const top = gitTop(cwd);
  if (given && !isAbsolute(given) && top) ignoreInGit(top, relative(top, root));
  if (flags.json) printJson(io, result);
  else io.out(`initialized ${root} with ${[...result.agents, 'user'].join(', ')}\n`);
  return Exit.ok;
}

/** A relative root lives in the worktree: keep it (and .amqrc) out of commits. True when it added a line. */
export function ignoreInGit(top: string, rootRel: string): boolean {
  const file = join(top, '.gitignore');
  const have = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const lines = new Set(have.split('\n').map((l) => l.trim()));
  const add = [`${rootRel}/`, '.amqrc'].filter((l) => !lines.has(l));
  if (add.length === 0) return false;
  appendFileSync(file, `${have && !have.endsWith('\n') ? '\n' : ''}${add.join('\n')}\n`);
  return true;
}

export async function receiptsList(flags: BusFlags, io: CommandIo): Promise<number> {
  const { bus } = openFromFlags(flags, io, 'read');
  const receipts = bus.receipts(me(flags), {
    ...(flags.msgId ? { msgId: flags.msgId } : {}),
    ...(flags.stage ? { stage: flags.stage } : {}),
  });
  if (flags.json) printJson(io, receipts);
  else
    for (const r of receipts)
      io.out(`${r.emitted_at}  ${r.stage.padEnd(7)}  ${r.msg_id}  from ${r.sender}\n`);
  return Exit.ok;
}

export async function dlqList(flags: BusFlags, io: CommandIo): Promise<number> {
  const { bus } = openFromFlags(flags, io, 'read');
  if (flags.new && flags.cur) throw new UsageError('--new and --cur are exclusive');
  const { entries, warnings } = bus.dlqList(me(flags), flags.new ? 'new' : flags.cur ? 'cur' : 'all');
  for (const w of warnings) warn(io, w);
  const rows = entries.map((e) => ({ ...e.envelope, box: e.box }));
  if (flags.json) printJson(io, rows);
  else {
    for (const r of rows) {
      io.out(
        `${r.failure_time}  ${r.id}  ${r.original_file}  ${r.failure_reason}  retries ${r.retry_count} (${r.retry_state})\n`,
      );
    }
  }
  return Exit.ok;
}

export async function dlqRead(flags: BusFlags, io: CommandIo): Promise<number> {
  const { bus } = openFromFlags(flags, io);
  const entry = bus.dlqRead(me(flags), flags.id!);
  const truncated = isTruncated(entry);
  if (truncated) {
    warn(
      io,
      `the original is ${entry.originalBytes} bytes, over a message's 10 MiB limit: showing its first ${entry.original.length}; the whole of it stays in ${entry.file}`,
    );
  }
  if (flags.json) {
    printJson(io, {
      envelope: entry.envelope,
      original: entry.original.toString('utf8'),
      ...(truncated ? { original_bytes: entry.originalBytes, truncated } : {}),
    });
  } else {
    const e = entry.envelope;
    io.out(
      `DLQ ${e.id}: ${e.original_file}\n${e.failure_reason}: ${e.failure_detail}\nfailed ${e.failure_time}, retries ${e.retry_count} (${e.retry_state})\n---\n${entry.original.toString('utf8')}`,
    );
  }
  return Exit.ok;
}

export async function dlqRetry(flags: BusFlags, io: CommandIo): Promise<number> {
  const { bus } = openFromFlags(flags, io);
  const handle = me(flags);
  if (!flags.id === !flags.all) throw new UsageError('give exactly one of --id or --all');
  if (flags.id) {
    const result = bus.dlqRetry(handle, flags.id, flags.force === true);
    if (flags.json) printJson(io, result);
    else io.out(`${result.id}: ${result.original_file} ${result.already ? 'was already' : ''} redelivered\n`);
    return Exit.ok;
  }
  const results = bus.dlqRetryAll(handle, flags.force === true);
  if (flags.json) printJson(io, results);
  else for (const r of results) io.out(`${r.id}: ${'error' in r ? `refused: ${r.error}` : 'redelivered'}\n`);
  return results.some((r) => 'error' in r) ? Exit.failed : Exit.ok;
}

async function confirm(question: string, flags: BusFlags): Promise<boolean> {
  if (flags.yes || flags.dryRun) return true;
  if (!process.stdin.isTTY)
    throw new UsageError('refusing to delete without confirmation', { hint: 'pass --yes (or --dry-run)' });
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

export async function dlqPurge(flags: BusFlags, io: CommandIo): Promise<number> {
  const { bus } = openFromFlags(flags, io);
  const handle = me(flags);
  const olderThanMs = flags.olderThan ? parseDuration(flags.olderThan, '--older-than') : undefined;
  const preview = bus.dlqPurge(handle, {
    ...(olderThanMs !== undefined ? { olderThanMs } : {}),
    dryRun: true,
  });
  if (
    !flags.dryRun &&
    preview.removed.length > 0 &&
    !(await confirm(`delete ${preview.removed.length} dead letter(s)?`, flags))
  ) {
    return Exit.ok;
  }
  const result = flags.dryRun
    ? preview
    : bus.dlqPurge(handle, olderThanMs !== undefined ? { olderThanMs } : {});
  if (flags.json) printJson(io, result);
  else io.out(`${flags.dryRun ? 'would remove' : 'removed'} ${result.removed.length} dead letter(s)\n`);
  return Exit.ok;
}

export async function presenceSet(flags: BusFlags, io: CommandIo): Promise<number> {
  const { bus } = openFromFlags(flags, io);
  const p = bus.setPresence(me(flags), flags.status!, flags.note);
  if (flags.json) printJson(io, p);
  else io.out(`${p.handle}: ${p.status}\n`);
  return Exit.ok;
}

export async function presenceList(flags: BusFlags, io: CommandIo): Promise<number> {
  const { bus } = openFromFlags(flags, io, 'read');
  const all = bus.presence();
  if (flags.json) printJson(io, all);
  else
    for (const p of all)
      io.out(`${p.handle.padEnd(16)} ${p.status.padEnd(12)} ${p.last_seen}${p.note ? `  ${p.note}` : ''}\n`);
  return Exit.ok;
}

export async function who(flags: BusFlags, io: CommandIo): Promise<number> {
  const { bus } = openFromFlags(flags, io, 'read');
  const entries = bus.who();
  if (flags.json) printJson(io, entries);
  else {
    for (const e of entries) {
      io.out(
        `${(e.session || '(base)').padEnd(12)} ${e.handle.padEnd(16)} ${e.kind.padEnd(6)} ${e.active ? 'active' : 'idle  '} ${e.status}\n`,
      );
    }
  }
  return Exit.ok;
}

export async function doctor(flags: BusFlags, io: CommandIo): Promise<number> {
  const { resolved } = openFromFlags(flags, io, 'read');
  const schema = jsonSchema(flags);
  const report = runDoctor(resolved, {
    ops: flags.ops === true,
    fixMailboxes: flags.fixMailboxes === true,
    fixWakeLocks: flags.fixWakeLocks === true,
  });
  if (flags.json) printJson(io, schema === 2 ? doctorV2(report, resolved) : report);
  else {
    for (const c of report.checks) io.out(`[${c.status}] ${c.name}: ${c.detail}\n`);
    for (const a of report.ops?.agents ?? []) {
      const who = a.session ? `${a.session}/${a.handle}` : a.handle;
      const wake = a.wake
        ? `  wake ${a.wake.state} (pid ${a.wake.pid}${a.wake.pane ? `, pane ${a.wake.pane}` : ''})`
        : '';
      io.out(
        `  ${who.padEnd(24)} unread ${a.unread_count}  dlq ${a.dlq_count}  ${a.presence_status ?? ''}${wake}\n`,
      );
    }
    if (report.ops)
      io.out(`  wakes: ${report.ops.wakes.running} running, ${report.ops.wakes.stale} stale lock(s)\n`);
    for (const f of report.ops?.fixed_wake_locks ?? []) io.out(`  removed the stale wake lock of ${f}\n`);
    for (const h of report.ops?.hints ?? []) io.out(`  hint ${h.code}: ${h.detail}\n`);
  }
  return Exit.ok;
}

/**
 * `--json-schema 2`: AMQ's closed doctor contract. checks, mailboxes and summary as schema 1;
 * `ops` is {root: {path, source}, agents, operator_gate, wake_locks, hints}, and every wake lock
 * (and every lock `--fix-wake-locks` removed, `removed: true`) carries `wake_check`: the very
 * schema-2 envelope `wake check --json-schema 2` prints for that agent (checkV2). Schema 1's
 * `wakes` tally and `fixed_wake_locks` list are in the rows.
 */
function doctorV2(report: DoctorReport, resolved: ResolvedRoot) {
  const { checks, mailboxes, summary } = report;
  if (!report.ops) return { schema: 2, checks, mailboxes, summary };
  const self = selfArgv();
  const rootOf = (session?: string) => (session ? join(resolved.baseRoot, session) : resolved.root);
  const row = (handle: string, session: string | undefined, lock: Record<string, unknown>) => {
    const root = rootOf(session);
    return {
      agent: handle,
      ...(session ? { session } : {}),
      root,
      lock: wakeLockPath(mailbox(root, handle)),
      ...lock,
      wake_check: checkV2(checkWake({ root, me: handle, self, env: process.env })),
    };
  };
  const held = report.ops.agents
    .filter((a) => a.wake)
    .map((a) =>
      row(a.handle, a.session, {
        status: a.wake!.state,
        pid: a.wake!.pid,
        started: a.wake!.started,
        ...(a.wake!.pane ? { pane: a.wake!.pane } : {}),
      }),
    );
  const removed = (report.ops.fixed_wake_locks ?? []).map((who) => {
    const [session, handle] = who.includes('/') ? who.split('/', 2) : [undefined, who];
    return row(handle!, session, { status: 'stale', removed: true });
  });
  const { agents, operator_gate, hints } = report.ops;
  return {
    schema: 2,
    checks,
    mailboxes,
    summary,
    ops: {
      root: { path: resolved.root, source: resolved.source },
      agents,
      operator_gate,
      wake_locks: [...held, ...removed],
      hints,
    },
  };
}

export async function cleanup(flags: BusFlags, io: CommandIo): Promise<number> {
  if (!flags.tmpOlderThan && !flags.wakeQuarantineOlderThan && !flags.launchJournal)
    throw new UsageError(
      'nothing to clean: pass --tmp-older-than, --wake-quarantine-older-than or --launch-journal',
    );
  const opened = openFromFlags(flags, io);
  const root = opened.bus.root;
  if (flags.launchJournal && root === opened.resolved.baseRoot)
    throw new UsageError(`--launch-journal clears a session's journal: ${root} is a base root`, {
      hint: 'pass --root <base root>/<session>',
    });
  const tmpMs = flags.tmpOlderThan ? parseDuration(flags.tmpOlderThan, '--tmp-older-than') : undefined;
  const quarantineMs = flags.wakeQuarantineOlderThan
    ? parseDuration(flags.wakeQuarantineOlderThan, '--wake-quarantine-older-than')
    : undefined;
  const find = (dryRun: boolean) => ({
    tmp: tmpMs === undefined ? [] : cleanupTmp(root, tmpMs, dryRun),
    wake_quarantine: quarantineMs === undefined ? [] : cleanupWakeQuarantine(root, quarantineMs, dryRun),
    launch_journal: flags.launchJournal ? clearLaunchJournal(root, dryRun) : undefined,
  });
  const found = find(true);
  const files = [
    ...found.tmp,
    ...found.wake_quarantine,
    ...(found.launch_journal ? [found.launch_journal.path] : []),
  ];
  const go = files.length > 0 && !flags.dryRun && (await confirm(`remove ${files.length} file(s)?`, flags));
  if (go) find(false);
  if (flags.json) printJson(io, { files, ...found, removed: go, dry_run: flags.dryRun === true });
  else {
    const lines = [
      ...(tmpMs !== undefined
        ? [`${go ? 'removed' : 'found'} ${found.tmp.length} temp file(s)`, ...found.tmp]
        : []),
      ...(quarantineMs !== undefined
        ? [
            `${go ? 'removed' : 'found'} ${found.wake_quarantine.length} quarantined wake file(s)`,
            ...found.wake_quarantine,
          ]
        : []),
      ...(flags.launchJournal
        ? [
            found.launch_journal
              ? `${go ? 'removed' : 'found'} the launch journal ${found.launch_journal.path} (${journalLine(found.launch_journal.agents)})`
              : `no launch journal in ${root}`,
          ]
        : []),
    ];
    io.out(`${lines.join('\n')}\n`);
  }
  return Exit.ok;
}

function journalLine(agents: Record<string, string>): string {
  const entries = Object.entries(agents);
  return entries.length ? entries.map(([h, state]) => `${h} ${state}`).join(', ') : 'empty';
}
