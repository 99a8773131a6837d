import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { messageOf, NotFoundError } from '../core/errors.js';
import { claim } from './claim.js';
import { parseRfc3339 } from './clock.js';
import { moveToDlq } from './dlq.js';
import { errno, exists, fsyncDir, readRegularFile } from './durable.js';
import { MessageInvalidError } from './errors.js';
import { isMessageFilename, isValidHandle, messageFilename } from './handle.js';
import { type Mailbox, refuseSymlinks } from './layout.js';
import { byCreated, type Header, MAX_MESSAGE_BYTES, type Message, parseMessage } from './message.js';
import { newReceipt, type Receipt, writeReceipts } from './receipts.js';
import { headerProblem, type ValidateOptions } from './validate.js';

/** A message as list/drain/thread report it: the header, flattened, plus where it is. */
export interface MessageItem {
  id: string;
  from: string;
  to: string[];
  thread: string;
  subject: string;
  created: string;
  priority: string;
  kind: string;
  labels: string[];
  refs: string[];
  context?: Record<string, unknown>;
  reply_to?: string;
  reply_project?: string;
  from_project?: string;
  body?: string;
  /** Sort key: `created` in ns (not printed). */
  createdNs?: bigint;
}

export interface DrainItem extends MessageItem {
  moved_to_cur: boolean;
  moved_to_dlq: boolean;
  parse_error?: string;
  dlq_id?: string;
}

export function toItem(h: Header, body?: string): MessageItem {
  return {
    id: h.id,
    from: h.from,
    to: h.to,
    thread: h.thread,
    subject: h.subject ?? '',
    created: h.created,
    priority: h.priority ?? '',
    kind: h.kind ?? '',
    labels: h.labels ?? [],
    refs: h.refs ?? [],
    ...(h.context && Object.keys(h.context).length > 0 ? { context: h.context } : {}),
    ...(h.reply_to ? { reply_to: h.reply_to } : {}),
    ...(h.reply_project ? { reply_project: h.reply_project } : {}),
    ...(h.from_project ? { from_project: h.from_project } : {}),
    ...(body !== undefined ? { body } : {}),
    createdNs: parseRfc3339(h.created) ?? 0n,
  };
}

/** Names that look like mail: `*.md`, not hidden (tmp attempts never do), not directories. Sorted. */
export function mailNames(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => !d.isDirectory() && isMessageFilename(d.name))
      .map((d) => d.name)
      .sort();
  } catch (error) {
    if (errno(error) === 'ENOENT') return [];
    throw error;
  }
}

/** Reads, parses and validates one file; throws MessageInvalidError with the DLQ reason. */
export function loadMessage(path: string, options: ValidateOptions = {}): Message & { bytes: Buffer } {
  const bytes = readRegularFile(path, MAX_MESSAGE_BYTES);
  const message = parseMessage(bytes);
  const problem = headerProblem(message.header, options);
  if (problem)
    throw Object.assign(new MessageInvalidError('invalid_header', problem), { header: message.header });
  return { ...message, bytes };
}

export interface ListOptions {
  box?: 'new' | 'cur';
  from?: string;
  kind?: string;
  priority?: string;
  thread?: string;
  /** Every label given must be present. */
  labels?: string[];
  limit?: number;
  offset?: number;
  includeBody?: boolean;
}

/** Header-only listing; never moves anything. Unreadable files are skipped with a warning. */
export function listMessages(
  box: Mailbox,
  options: ListOptions = {},
  validate: ValidateOptions = {},
): { items: MessageItem[]; warnings: string[] } {
  refuseSymlinks(box);
  const dir = options.box === 'cur' ? box.inboxCur : box.inboxNew;
  const items: MessageItem[] = [];
  const warnings: string[] = [];
  for (const name of mailNames(dir)) {
    let m: Message;
    try {
      m = loadMessage(join(dir, name), validate);
    } catch (error) {
      if (errno(error) === 'ENOENT') continue; // claimed by a consumer meanwhile
      warnings.push(`skipping ${name}: ${messageOf(error)}`);
      continue;
    }
    const h = m.header;
    if (options.from && h.from !== options.from) continue;
    if (options.kind && h.kind !== options.kind) continue;
    if (options.thread && h.thread !== options.thread) continue;
    if (options.priority && h.priority !== options.priority) continue;
    if (options.labels?.some((l) => !(h.labels ?? []).includes(l))) continue;
    items.push(toItem(h, options.includeBody ? m.body : undefined));
  }
  items.sort(byCreated);
  const offset = options.offset ?? 0;
  const limit = options.limit ?? 0;
  return { items: items.slice(offset, limit > 0 ? offset + limit : undefined), warnings };
}

export interface DrainOptions {
  /** Default 20; 0 = everything. */
  limit?: number;
  includeBody?: boolean;
}

/**
 * AMQ's drain, one message at a time: each is read and checked where it is (`new/`), then
 * claimed (new → cur, one winner among concurrent consumers); valid mail gets a `drained`
 * receipt, invalid mail (malformed, oversized, nested too deep) goes from `cur/` to the DLQ with
 * a `dlq` receipt. One bad message never holds up the rest of the batch, and a failure part-way
 * leaves what was not reached in `new/`. Cost follows what is in `new/`, never what is in `cur/`.
 */
export function drainMessages(
  box: Mailbox,
  options: DrainOptions = {},
  validate: ValidateOptions = {},
): DrainItem[] {
  refuseSymlinks(box);
  const limit = options.limit ?? 20;
  const items: DrainItem[] = [];
  const receipts: Receipt[] = [];
  try {
    for (const name of mailNames(box.inboxNew)) {
      if (limit > 0 && items.length >= limit) break;
      const drained = drainOne(box, name, options.includeBody === true, validate);
      if (!drained) continue;
      items.push(drained.item);
      receipts.push(drained.receipt);
    }
  } finally {
    if (items.length > 0) {
      fsyncDir(box.inboxCur);
      fsyncDir(box.inboxNew);
      writeReceipts(box, receipts);
    }
  }
  return items.sort(byCreated);
}

/** One message of `new/`, parsed, then claimed; undefined when another consumer took it first. */
function drainOne(
  box: Mailbox,
  name: string,
  includeBody: boolean,
  validate: ValidateOptions,
): { item: DrainItem; receipt: Receipt } | undefined {
  let message: Message | undefined;
  let invalid: MessageInvalidError | undefined;
  try {
    message = loadMessage(join(box.inboxNew, name), validate);
  } catch (error) {
    if (errno(error) === 'ENOENT') return undefined;
    if (!(error instanceof MessageInvalidError)) throw error;
    invalid = error;
  }
  if (claim(box.inboxNew, box.inboxCur, name) !== 'claimed') return undefined;
  if (!message) return deadLetter(box, join(box.inboxCur, name), name, invalid!, 'cur');
  const { header, body } = message;
  return {
    item: { ...toItem(header, includeBody ? body : undefined), moved_to_cur: true, moved_to_dlq: false },
    receipt: newReceipt({
      msg_id: header.id,
      thread: header.thread,
      sender: header.from,
      consumer: box.handle,
      stage: 'drained',
    }),
  };
}

/** Moves an invalid message to the DLQ; returns its drain item and `dlq` receipt. */
function deadLetter(
  box: Mailbox,
  path: string,
  name: string,
  error: MessageInvalidError,
  sourceDir: 'new' | 'cur',
): { item: DrainItem; receipt: Receipt } {
  let original: Buffer = Buffer.alloc(0);
  try {
    original = readRegularFile(path, Number.MAX_SAFE_INTEGER);
  } catch {
    // symlink, FIFO or device: dead-lettered without following or reading it
  }
  const header = (error as MessageInvalidError & { header?: Header }).header;
  const envelope = moveToDlq(box, {
    path,
    filename: name,
    original,
    ...(header?.id ? { headerId: header.id } : {}),
    reason: error.reason,
    detail: error.message,
    sourceDir,
  });
  const sender = header && isValidHandle(header.from) ? header.from : '';
  const detail = sender ? error.message : `${error.message} (sender could not be parsed)`;
  return {
    item: {
      ...(header
        ? toItem(header)
        : toItem({ schema: 0, id: envelope.original_id, from: '', to: [], thread: '', created: '' })),
      id: envelope.original_id,
      moved_to_cur: false,
      moved_to_dlq: true,
      parse_error: error.message,
      dlq_id: envelope.id,
    },
    receipt: newReceipt({
      msg_id: envelope.original_id,
      ...(header?.thread ? { thread: header.thread } : {}),
      sender,
      consumer: box.handle,
      stage: 'dlq',
      detail,
    }),
  };
}

export interface ReadResult {
  header: Header;
  body: string;
  box: 'new' | 'cur';
}

/**
 * `read --id`: `new/` then `cur/`. Validated before it is moved: invalid in `new/` goes to the
 * DLQ (and is an error), invalid in `cur/` is only an error; valid in `new/` is claimed with a
 * `drained` receipt.
 */
export function readOne(box: Mailbox, id: string, validate: ValidateOptions = {}): ReadResult {
  refuseSymlinks(box);
  const name = messageFilename(id);
  const inNew = join(box.inboxNew, name);
  if (exists(inNew)) {
    let m: Message;
    try {
      m = loadMessage(inNew, validate);
    } catch (error) {
      if (error instanceof MessageInvalidError) {
        const { receipt } = deadLetter(box, inNew, name, error, 'new');
        writeReceipts(box, [receipt]);
      }
      throw error;
    }
    if (claim(box.inboxNew, box.inboxCur, name) === 'claimed') {
      fsyncDir(box.inboxCur);
      fsyncDir(box.inboxNew);
      writeReceipts(box, [
        newReceipt({
          msg_id: m.header.id,
          thread: m.header.thread,
          sender: m.header.from,
          consumer: box.handle,
          stage: 'drained',
        }),
      ]);
    }
    return { header: m.header, body: m.body, box: 'new' };
  }
  const inCur = join(box.inboxCur, name);
  if (exists(inCur)) {
    const m = loadMessage(inCur, validate);
    return { header: m.header, body: m.body, box: 'cur' };
  }
  throw new NotFoundError(`no message '${id}' in ${box.handle}'s inbox`);
}

/** Where a message of this mailbox lives now (inbox new, cur, or the outbox), if anywhere. */
export function findMessage(
  box: Mailbox,
  id: string,
): { path: string; where: 'new' | 'cur' | 'sent' } | undefined {
  const name = messageFilename(id);
  for (const [dir, where] of [
    [box.inboxNew, 'new'],
    [box.inboxCur, 'cur'],
    [box.sent, 'sent'],
  ] as const) {
    if (exists(join(dir, name))) return { path: join(dir, name), where };
  }
  return undefined;
}
