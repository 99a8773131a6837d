import { readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { messageOf, NotFoundError, UsageError } from '../core/errors.js';
import { parseRfc3339, rfc3339 } from './clock.js';
import {
  errno,
  exists,
  fsyncDir,
  publishNoReplace,
  readRegularFile,
  readRegularFileStart,
  writeExclusive,
  writeFileAtomic,
} from './durable.js';
import { DlqRetryError, MessageInvalidError } from './errors.js';
import { goJson } from './go-json.js';
import { isMessageFilename, isSafeBaseName } from './handle.js';
import { attemptName, newDlqId } from './ids.js';
import { ensureMailbox, type Mailbox } from './layout.js';
import { MAX_MESSAGE_BYTES } from './message.js';

export const MAX_RETRIES = 3;
export type FailureReason = 'parse_error' | 'invalid_header' | 'processing_error';
export type RetryState = 'ready' | 'pending' | 'delivered' | 'indeterminate';
const RETRY_STATES: readonly string[] = ['ready', 'pending', 'delivered', 'indeterminate'];

export interface Envelope {
  schema: 'amq/dlq/v1';
  id: string;
  original_id: string;
  original_file: string;
  failure_reason: string;
  failure_detail: string;
  failure_time: string;
  retry_count: number;
  retry_state: RetryState;
  retry_pending?: boolean;
  retry_delivered?: boolean;
  source_dir: 'new' | 'cur';
}

/** The envelope JSON and its `---` lines fit in this; the original message follows it. */
const ENVELOPE_HEAD_BYTES = 64 * 1024;

export interface DlqEntry {
  envelope: Envelope;
  /**
   * The original message's bytes, as many as were read: all of them when it is within a
   * message's 10 MiB limit (`read`, `retry`); see `originalBytes` and isTruncated.
   */
  original: Buffer;
  /** The original's whole size on disk: over 10 MiB for a message dead-lettered for its size. */
  originalBytes: number;
  box: 'new' | 'cur';
  file: string;
}

/** Whether `original` holds less than the envelope file does (an oversized message, or `list`). */
export function isTruncated(entry: DlqEntry): boolean {
  return entry.original.length < entry.originalBytes;
}

/** `---` (not `---json`), the envelope in Go's key order, `---`, then the original bytes verbatim. */
export function formatEnvelope(envelope: Envelope, original: Buffer): Buffer {
  const e: Envelope = {
    schema: envelope.schema,
    id: envelope.id,
    original_id: envelope.original_id,
    original_file: envelope.original_file,
    failure_reason: envelope.failure_reason,
    failure_detail: envelope.failure_detail,
    failure_time: envelope.failure_time,
    retry_count: envelope.retry_count,
    retry_state: envelope.retry_state,
    ...(envelope.retry_state === 'pending' ? { retry_pending: true } : {}),
    ...(envelope.retry_state === 'delivered' ? { retry_delivered: true } : {}),
    source_dir: envelope.source_dir,
  };
  return Buffer.concat([Buffer.from(`---\n${goJson(e)}\n---\n`), original]);
}

export function parseEnvelope(bytes: Buffer): { envelope: Envelope; original: Buffer } {
  if (bytes.subarray(0, 4).toString() !== '---\n') {
    throw new MessageInvalidError('parse_error', 'DLQ file: missing envelope start');
  }
  const at = bytes.indexOf('\n---\n', 3);
  if (at < 0) throw new MessageInvalidError('parse_error', 'DLQ file: missing envelope end');
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(bytes.subarray(4, at + 1).toString('utf8'));
  } catch (error) {
    throw new MessageInvalidError('parse_error', `DLQ envelope: ${messageOf(error)}`);
  }
  if (!raw || typeof raw !== 'object')
    throw new MessageInvalidError('parse_error', 'DLQ envelope is not an object');
  const pending = raw.retry_pending === true;
  const delivered = raw.retry_delivered === true;
  let state = raw.retry_state as string | undefined;
  if (state === undefined || state === '') state = delivered ? 'delivered' : pending ? 'pending' : 'ready';
  if (!RETRY_STATES.includes(state)) {
    throw new MessageInvalidError('parse_error', `DLQ envelope: invalid retry_state '${state}'`);
  }
  if ((pending && state !== 'pending') || (delivered && state !== 'delivered') || (pending && delivered)) {
    throw new MessageInvalidError(
      'parse_error',
      `DLQ envelope: retry_state '${state}' disagrees with retry flags`,
    );
  }
  const envelope: Envelope = {
    schema: 'amq/dlq/v1',
    id: String(raw.id ?? ''),
    original_id: String(raw.original_id ?? ''),
    original_file: String(raw.original_file ?? ''),
    failure_reason: String(raw.failure_reason ?? ''),
    failure_detail: String(raw.failure_detail ?? ''),
    failure_time: String(raw.failure_time ?? ''),
    retry_count: typeof raw.retry_count === 'number' ? raw.retry_count : 0,
    retry_state: state as RetryState,
    source_dir: raw.source_dir === 'new' ? 'new' : 'cur',
  };
  return { envelope, original: bytes.subarray(at + 5) };
}

export interface DeadLetter {
  /** The file being dead-lettered: the claimed copy in `cur/` (drain) or the one in `new/` (read). */
  path: string;
  filename: string;
  /** Its bytes; empty when it could not be read (a symlink or FIFO is never followed). */
  original: Buffer;
  headerId?: string;
  reason: FailureReason;
  detail: string;
  sourceDir: 'new' | 'cur';
}

/**
 * Publishes an envelope into `dlq/new` with the same tmp + no-replace + fsync protocol as mail,
 * then removes the message from the inbox. Returns the DLQ id.
 */
export function moveToDlq(box: Mailbox, letter: DeadLetter): Envelope {
  ensureMailbox(box);
  const id = newDlqId();
  const stem = letter.filename.replace(/\.md$/, '');
  const envelope: Envelope = {
    schema: 'amq/dlq/v1',
    id,
    original_id: letter.headerId && isSafeBaseName(letter.headerId) ? letter.headerId : stem,
    original_file: letter.filename,
    failure_reason: letter.reason,
    failure_detail: letter.detail,
    failure_time: rfc3339(),
    retry_count: 0,
    retry_state: 'ready',
    source_dir: letter.sourceDir,
  };
  const bytes = formatEnvelope(envelope, letter.original);
  const name = `${id}.md`;
  const tmp = writeExclusive(box.dlqTmp, attemptName(name), bytes);
  fsyncDir(box.dlqTmp);
  publishNoReplace(tmp, join(box.dlqNew, name), bytes);
  fsyncDir(box.dlqNew);
  rmSync(letter.path, { force: true });
  fsyncDir(join(letter.path, '..'));
  return envelope;
}

function dlqNames(dir: string): string[] {
  try {
    return readdirSync(dir).filter((n) => isMessageFilename(n));
  } catch (error) {
    if (errno(error) === 'ENOENT') return [];
    throw error;
  }
}

/**
 * An envelope and up to `originalUpTo` bytes of its original. An envelope can be bigger than a
 * message may be (it wraps one dead-lettered for its size), so it is never refused for its size:
 * only the part needed is read.
 */
function readEntry(box: Mailbox, where: 'new' | 'cur', name: string, originalUpTo: number): DlqEntry {
  const file = join(where === 'new' ? box.dlqNew : box.dlqCur, name);
  const { bytes, size } = readRegularFileStart(file, ENVELOPE_HEAD_BYTES + originalUpTo);
  const { envelope, original } = parseEnvelope(bytes);
  const originalBytes = original.length + size - bytes.length;
  return { envelope, original: original.subarray(0, originalUpTo), originalBytes, box: where, file };
}

/** Envelopes in `dlq/new`, `dlq/cur` or both (without their originals); a name in both is the `cur` one. */
export function listDlq(
  box: Mailbox,
  which: 'new' | 'cur' | 'all' = 'all',
): { entries: DlqEntry[]; warnings: string[] } {
  const cur = new Set(dlqNames(box.dlqCur));
  const entries: DlqEntry[] = [];
  const warnings: string[] = [];
  const wanted: Array<'new' | 'cur'> = which === 'all' ? ['new', 'cur'] : [which];
  for (const where of wanted) {
    for (const name of dlqNames(where === 'new' ? box.dlqNew : box.dlqCur)) {
      if (where === 'new' && cur.has(name)) continue;
      try {
        entries.push(readEntry(box, where, name, 0));
      } catch (error) {
        warnings.push(`${name}: ${messageOf(error)}`);
      }
    }
  }
  entries.sort((a, b) => (a.envelope.id < b.envelope.id ? -1 : a.envelope.id > b.envelope.id ? 1 : 0));
  return { entries, warnings };
}

function dlqFilename(id: string): string {
  const name = id.endsWith('.md') ? id : `${id}.md`;
  if (!isMessageFilename(name)) throw new UsageError(`invalid DLQ id '${id}'`);
  return name;
}

function findEntry(box: Mailbox, id: string): DlqEntry {
  const name = dlqFilename(id);
  if (exists(join(box.dlqCur, name))) return readEntry(box, 'cur', name, MAX_MESSAGE_BYTES);
  if (exists(join(box.dlqNew, name))) return readEntry(box, 'new', name, MAX_MESSAGE_BYTES);
  throw new NotFoundError(`no DLQ message '${id}' for ${box.handle}`);
}

/** `dlq read`: returns the envelope and marks it inspected (moved to `dlq/cur`). */
export function readDlq(box: Mailbox, id: string): DlqEntry {
  const entry = findEntry(box, id);
  if (entry.box === 'new') {
    const name = dlqFilename(id);
    const dest = join(box.dlqCur, name);
    if (!exists(dest)) {
      try {
        renameSync(entry.file, dest);
        fsyncDir(box.dlqCur);
        fsyncDir(box.dlqNew);
      } catch (error) {
        if (errno(error) !== 'ENOENT') throw error;
      }
    }
    return { ...entry, box: 'cur', file: dest };
  }
  return entry;
}

export interface RetryResult {
  id: string;
  original_file: string;
  retry_count: number;
  state: RetryState;
  already?: boolean;
}

/**
 * Redelivers the original bytes under their original name. The envelope goes `pending` (in
 * `dlq/cur`) before delivery and `delivered` after, so a crash in between is finished later only
 * when the delivered copy (or an identical tmp attempt) proves it happened.
 *
 * AMQ serializes retries of one envelope with flock(2), which Node cannot take without a native
 * module; here the no-replace publish makes two concurrent retries converge on one delivery.
 */
export function retryDlq(box: Mailbox, id: string, force = false): RetryResult {
  const entry = findEntry(box, id);
  const env = entry.envelope;
  const name = env.original_file;
  if (!isMessageFilename(name))
    throw new DlqRetryError(`DLQ message ${env.id}: unsafe original_file '${name}'`);
  const inNew = join(box.inboxNew, name);
  const inCur = join(box.inboxCur, name);
  const result = (state: RetryState, already = false): RetryResult => ({
    id: env.id,
    original_file: name,
    retry_count: env.retry_count,
    state,
    ...(already ? { already } : {}),
  });

  if (env.retry_state === 'delivered') return result('delivered', true);
  if (isTruncated(entry)) {
    throw new DlqRetryError(
      `DLQ message ${env.id}: its original is ${entry.originalBytes} bytes, over the 10 MiB limit of a message; redelivered, it would be dead-lettered again`,
      { hint: `read it with \`dlq read --id ${env.id}\`, have it sent again smaller, then \`dlq purge\` it` },
    );
  }
  if (env.retry_state === 'pending' || env.retry_state === 'indeterminate') {
    if (
      sameBytes(inNew, entry.original) ||
      sameBytes(inCur, entry.original) ||
      publishLeftover(box, name, entry.original)
    ) {
      saveEnvelope(box, entry, { ...env, retry_state: 'delivered' });
      return result('delivered', true);
    }
    throw new DlqRetryError(
      `DLQ message ${env.id} was left '${env.retry_state}' by an interrupted retry and no delivered copy proves it`,
      { hint: 'inspect the inbox; nothing was changed' },
    );
  }
  if (env.retry_count >= MAX_RETRIES && !force) {
    throw new DlqRetryError(`DLQ message ${env.id} was retried ${env.retry_count} times`, {
      hint: 'pass --force to retry anyway',
    });
  }
  if (exists(inNew) || exists(inCur)) {
    throw new DlqRetryError(`${name} is already in ${box.handle}'s inbox; not redelivering it`);
  }
  const pending: Envelope = { ...env, retry_count: env.retry_count + 1, retry_state: 'pending' };
  saveEnvelope(box, entry, pending);
  ensureMailbox(box);
  const tmp = writeExclusive(box.inboxTmp, attemptName(name), entry.original);
  fsyncDir(box.inboxTmp);
  publishNoReplace(tmp, inNew, entry.original);
  fsyncDir(box.inboxNew);
  saveEnvelope(box, { ...entry, box: 'cur' }, { ...pending, retry_state: 'delivered' });
  return { ...result('delivered'), retry_count: pending.retry_count };
}

function sameBytes(path: string, bytes: Buffer): boolean {
  try {
    return readRegularFile(path, bytes.length).equals(bytes);
  } catch {
    return false;
  }
}

/** A crash after staging the retry: an identical attempt in `inbox/tmp` can still be published. */
function publishLeftover(box: Mailbox, name: string, bytes: Buffer): boolean {
  let names: string[];
  try {
    names = readdirSync(box.inboxTmp).filter((n) => n.startsWith(`.${name}.tmp-`));
  } catch {
    return false;
  }
  for (const n of names) {
    const tmp = join(box.inboxTmp, n);
    if (!sameBytes(tmp, bytes)) continue;
    publishNoReplace(tmp, join(box.inboxNew, name), bytes);
    fsyncDir(box.inboxNew);
    return true;
  }
  return false;
}

/** Writes the envelope to `dlq/cur` (the authoritative box) and drops any `dlq/new` copy. */
function saveEnvelope(box: Mailbox, entry: DlqEntry, envelope: Envelope): void {
  const name = dlqFilename(envelope.id);
  writeFileAtomic(box.dlqCur, name, formatEnvelope(envelope, entry.original));
  if (entry.box === 'new') {
    rmSync(join(box.dlqNew, name), { force: true });
    fsyncDir(box.dlqNew);
  }
}

export interface PurgeResult {
  removed: string[];
  dryRun: boolean;
}

/** Removes envelopes from both boxes, optionally only those that failed more than `olderThanMs` ago. */
export function purgeDlq(
  box: Mailbox,
  options: { olderThanMs?: number; dryRun?: boolean } = {},
): PurgeResult {
  const cutoff = options.olderThanMs === undefined ? undefined : Date.now() - options.olderThanMs;
  const removed: string[] = [];
  for (const dir of [box.dlqNew, box.dlqCur]) {
    for (const name of dlqNames(dir)) {
      const file = join(dir, name);
      if (cutoff !== undefined && failedAt(file) > cutoff) continue;
      removed.push(name.replace(/\.md$/, ''));
      if (!options.dryRun) rmSync(file, { force: true });
    }
  }
  return { removed: [...new Set(removed)].sort(), dryRun: options.dryRun === true };
}

function failedAt(file: string): number {
  try {
    const { envelope } = parseEnvelope(readRegularFileStart(file, ENVELOPE_HEAD_BYTES).bytes);
    const ns = parseRfc3339(envelope.failure_time);
    if (ns !== undefined) return Number(ns / 1_000_000n);
  } catch {
    // fall back to the file's age
  }
  return statSync(file).mtimeMs;
}
