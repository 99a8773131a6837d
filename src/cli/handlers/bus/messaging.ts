import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { SendResult } from '../../../bus/bus.js';
import { openBus } from '../../../bus/bus.js';
import { parseDuration } from '../../../bus/duration.js';
import { parseHandle } from '../../../bus/handle.js';
import type { DrainItem, MessageItem } from '../../../bus/inbox.js';
import { sessionsHolding } from '../../../bus/shell-context.js';
import type { BusKind, BusPriority } from '../../../core/bus-vocabulary.js';
import { NotFoundError, UsageError } from '../../../core/errors.js';
import { printable, printableLines } from '../../../core/printable.js';
import type { CommandIo } from '../../command-io.js';
import { Exit } from '../../exit-codes.js';
import { troupeCommand } from '../../self-command.js';
import { type BusFlags, count, printJson, readBody, readContext, splitList, warn } from './context.js';
import { me, openFromFlags } from './open.js';

/**
 * A mail's body as written, byte for byte, into a pipe or a file; on a terminal, without the escape
 * sequences that would drive it (a sender could clear the screen, retitle the window, hide lines).
 */
function body(text: string): string {
  return process.stdout.isTTY ? printableLines(text) : text;
}

function waitStage(flags: BusFlags, recipients: number): 'drained' | 'dlq' | undefined {
  if (flags.waitFor === undefined) return undefined;
  if (flags.waitFor !== 'drained' && flags.waitFor !== 'dlq') {
    throw new UsageError(`--wait-for expects drained or dlq, got '${flags.waitFor}'`);
  }
  if (recipients !== 1) throw new UsageError('--wait-for needs exactly one recipient');
  return flags.waitFor;
}

async function finishSend(
  flags: BusFlags,
  io: CommandIo,
  opened: ReturnType<typeof openFromFlags>,
  result: SendResult,
  stage: 'drained' | 'dlq' | undefined,
): Promise<number> {
  for (const w of result.warnings) warn(io, w);
  let wait: { event: 'matched' | 'timeout'; stage: string; receipt?: unknown } | undefined;
  if (stage) {
    const timeoutMs = parseDuration(flags.waitTimeout ?? '120s', '--wait-timeout');
    const receipt = await opened.bus.waitForReceipt(result.to[0]!, result.id, stage, {
      timeoutMs,
      pollMs: 200,
      root: result.root,
    });
    wait = receipt ? { event: 'matched', stage, receipt } : { event: 'timeout', stage };
  }
  if (flags.json) {
    const { warnings: _w, ...rest } = result;
    printJson(io, { ...rest, ...(wait ? { wait } : {}) });
  } else {
    io.out(`sent ${result.id} to ${result.to.join(', ')} (thread ${result.thread})\n`);
    if (wait)
      io.out(wait.event === 'matched' ? `${stage} by ${result.to[0]}\n` : `no ${stage} receipt yet\n`);
  }
  return wait?.event === 'timeout' ? Exit.timeout : Exit.ok;
}

/** What send and reply both take from their flags: the message itself, and whether it may be empty. */
function messageFields(flags: BusFlags) {
  const body = readBody(flags.body);
  const context = readContext(flags.context);
  return {
    body,
    ...(flags.subject !== undefined ? { subject: flags.subject } : {}),
    ...(flags.kind ? { kind: flags.kind as BusKind } : {}),
    ...(flags.priority ? { priority: flags.priority as BusPriority } : {}),
    ...(flags.labels ? { labels: splitList(flags.labels) } : {}),
    ...(context ? { context } : {}),
    ...(flags.allowEmpty ? { allowEmpty: true } : {}),
  };
}

export async function send(flags: BusFlags, io: CommandIo): Promise<number> {
  const opened = flags.fromSession ? fromSession(flags, io) : openFromFlags(flags, io);
  const from = me(flags);
  const to = splitList(flags.to);
  const unchosen =
    flags.session || flags.project || flags.fromSession ? undefined : unchosenSession(opened, from, to);
  const stage = waitStage(flags, to.length);
  const fields = messageFields(flags);
  const result = opened.bus.send({
    from,
    to,
    ...fields,
    ...(flags.thread !== undefined ? { thread: flags.thread } : {}),
    ...(flags.refs ? { refs: splitList(flags.refs) } : {}),
    ...(flags.session ? { session: flags.session } : {}),
    ...(flags.project ? { project: flags.project } : {}),
    ...(flags.allowSelf ? { allowSelf: true } : {}),
  });
  if (unchosen) warn(io, unchosen);
  return finishSend(flags, io, opened, result, stage);
}

export async function reply(flags: BusFlags, io: CommandIo): Promise<number> {
  const opened = openFromFlags(flags, io);
  const stage = waitStage(flags, 1);
  const fields = messageFields(flags);
  const from = me(flags);
  const result = opened.bus.reply(from, flags.id!, fields);
  // a reply routed to a session or a peer project (reply_to, reply_project) went where it should
  const unchosen =
    result.root === opened.resolved.baseRoot ? unchosenSession(opened, from, result.to) : undefined;
  if (unchosen) warn(io, unchosen);
  return finishSend(flags, io, opened, result, stage);
}

export async function list_(flags: BusFlags, io: CommandIo): Promise<number> {
  const { bus } = openFromFlags(flags, io, 'read');
  if (flags.new && flags.cur) throw new UsageError('--new and --cur are exclusive');
  const { items, warnings } = bus.list(me(flags), {
    box: flags.cur ? 'cur' : 'new',
    ...(flags.from ? { from: parseHandle(flags.from, '--from') } : {}),
    ...(flags.kind ? { kind: flags.kind } : {}),
    ...(flags.priority ? { priority: flags.priority } : {}),
    ...(flags.label?.length ? { labels: flags.label } : {}),
    ...(flags.thread ? { thread: flags.thread } : {}),
    limit: count(flags.limit, '--limit', 0),
    offset: count(flags.offset, '--offset', 0),
  });
  for (const w of warnings) warn(io, w);
  if (flags.json) {
    printJson(io, items);
    return Exit.ok;
  }
  for (const m of items) {
    io.out(`${m.created}  ${(m.priority || '-').padEnd(6)}  ${m.from}  ${m.id}  ${printable(m.subject)}\n`);
  }
  return Exit.ok;
}
export { list_ as list };

export async function read(flags: BusFlags, io: CommandIo): Promise<number> {
  const { bus } = openFromFlags(flags, io);
  const result = bus.read(me(flags), flags.id!);
  if (flags.json) printJson(io, { header: result.header, body: result.body });
  else io.out(body(result.body));
  return Exit.ok;
}

export async function drain(flags: BusFlags, io: CommandIo): Promise<number> {
  const { bus } = openFromFlags(flags, io);
  const handle = me(flags);
  const items = bus.drain(handle, {
    limit: count(flags.limit, '--limit', 20),
    includeBody: flags.includeBody === true,
  });
  if (flags.json) printJson(io, { drained: items, count: items.length });
  else printDrained(io, handle, items, flags.includeBody === true);
  return Exit.ok;
}

export function printDrained(io: CommandIo, handle: string, items: DrainItem[], withBody: boolean): void {
  if (items.length === 0) return;
  const out: string[] = [`[AMQ] ${items.length} new message(s) for ${handle}:`];
  for (const m of items) {
    if (m.moved_to_dlq) {
      out.push(`- ID: ${m.id}`, `  Moved to DLQ: ${printable(m.parse_error ?? '')}`, '---');
      continue;
    }
    out.push(
      `- From: ${m.from}`,
      `  Thread: ${printable(m.thread)}`,
      `  ID: ${m.id}`,
      `  Subject: ${printable(m.subject)}`,
      `  Priority: ${m.priority}`,
      `  Kind: ${m.kind}`,
      `  Created: ${m.created}`,
    );
    if (withBody)
      out.push(
        '  Body:',
        ...body(m.body ?? '')
          .replace(/\n$/, '')
          .split('\n')
          .map((l) => `  ${l}`),
      );
    out.push('---');
  }
  io.out(`${out.join('\n')}\n`);
}

export async function thread(flags: BusFlags, io: CommandIo): Promise<number> {
  const { bus } = openFromFlags(flags, io, 'read');
  const items: MessageItem[] = bus.thread(flags.id!, {
    ...(flags.agents ? { agents: splitList(flags.agents) } : {}),
    includeBody: flags.includeBody === true,
    limit: count(flags.limit, '--limit', 0),
  });
  if (flags.json) {
    printJson(io, items);
    return Exit.ok;
  }
  for (const m of items) {
    io.out(`${m.created}  ${m.from} -> ${m.to.join(', ')}  ${m.id}  ${printable(m.subject)}\n`);
    if (flags.includeBody && m.body) io.out(`${body(m.body).replace(/\n?$/, '\n')}---\n`);
  }
  return Exit.ok;
}

/**
 * `--from-session S --session T --root <base>` (AMQ's): send between two sessions of a base root
 * from a shell that is in neither, as if from S (S's outbox, a reply_to and thread naming S).
 */
function fromSession(flags: BusFlags, io: CommandIo): ReturnType<typeof openFromFlags> {
  if (!flags.session) throw new UsageError('--from-session needs --session (the session to deliver into)');
  if (!/^[a-z0-9_-]+$/.test(flags.fromSession!))
    throw new UsageError(`invalid session '${flags.fromSession}'`);
  const base = openFromFlags(flags, io);
  if (base.resolved.root !== base.resolved.baseRoot)
    throw new UsageError(`--from-session needs a base --root, and ${base.resolved.root} is a session`);
  const root = join(base.resolved.baseRoot, flags.fromSession!);
  if (!existsSync(join(root, 'agents')))
    throw new NotFoundError(`unknown session '${flags.fromSession}' (no ${root}/agents)`);
  const resolved = { ...base.resolved, root, session: flags.fromSession! };
  const bus = openBus(root, {
    baseRoot: resolved.baseRoot,
    session: resolved.session,
    ...(resolved.amqrc ? { amqrc: resolved.amqrc } : {}),
    strict: flags.strict === true,
  });
  return { bus, resolved };
}

/**
 * Mail from a plain shell (no --root, no AM_ROOT) into a base root whose sessions hold the
 * recipients: live agents read their session, not the base, so the mail would wait unseen.
 */
function unchosenSession(
  opened: ReturnType<typeof openFromFlags>,
  from: string,
  to: string[],
): string | undefined {
  const { resolved } = opened;
  if (resolved.source === 'flag' || resolved.source === 'env' || resolved.root !== resolved.baseRoot)
    return undefined;
  const handles = to.filter((t) => !t.includes('@'));
  const sessions = sessionsHolding(resolved.baseRoot, handles);
  if (sessions.length === 0) return undefined;
  const s = sessions.includes('collab') ? 'collab' : sessions[0]!;
  return `no session chosen: this mail goes to the base root ${resolved.root}, which live agents do not read; they are in session ${sessions.join(', ')} — pass --session ${s}, or pin this shell: eval "$(${troupeCommand()} bus env --session ${s} --me ${from})"`;
}
