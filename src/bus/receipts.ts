import { readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseRfc3339, rfc3339Nano } from './clock.js';
import { errno, fsyncDir, writeExclusive, writeFileAtomic } from './durable.js';
import { goJson } from './go-json.js';
import { isSafeBaseName } from './handle.js';
import { replaceTmpName } from './ids.js';
import { ensureMailbox, type Mailbox } from './layout.js';

export const STAGES = ['drained', 'dlq'] as const;
export type Stage = (typeof STAGES)[number];

export interface Receipt {
  schema: number;
  msg_id: string;
  thread?: string;
  sender: string;
  consumer: string;
  stage: Stage;
  emitted_at: string;
  detail?: string;
}

export function receiptName(msgId: string, consumer: string, stage: string): string {
  return `${msgId}__${consumer}__${stage}.json`;
}

export function newReceipt(r: Omit<Receipt, 'schema' | 'emitted_at'>): Receipt {
  return {
    schema: 1,
    msg_id: r.msg_id,
    ...(r.thread ? { thread: r.thread } : {}),
    sender: r.sender,
    consumer: r.consumer,
    stage: r.stage,
    emitted_at: rfc3339Nano(),
    ...(r.detail ? { detail: r.detail } : {}),
  };
}

function receiptBytes(r: Receipt): Buffer {
  return Buffer.from(`${goJson(r)}\n`);
}

export function writeReceipt(box: Mailbox, receipt: Receipt): void {
  ensureMailbox(box);
  writeFileAtomic(
    box.receipts,
    receiptName(receipt.msg_id, receipt.consumer, receipt.stage),
    receiptBytes(receipt),
  );
}

/**
 * The receipts of one drain, written as atomically as one at a time (temp, fsync, rename) but
 * with two directory fsyncs for the whole batch instead of two each.
 */
export function writeReceipts(box: Mailbox, receipts: Receipt[]): void {
  if (receipts.length === 0) return;
  if (receipts.length === 1) {
    writeReceipt(box, receipts[0]!);
    return;
  }
  ensureMailbox(box);
  const staged = receipts.map((r) => {
    const name = receiptName(r.msg_id, r.consumer, r.stage);
    return { name, tmp: writeExclusive(box.receipts, replaceTmpName(name), receiptBytes(r)) };
  });
  try {
    fsyncDir(box.receipts);
    for (const { name, tmp } of staged) renameSync(tmp, join(box.receipts, name));
  } finally {
    for (const { tmp } of staged) rmSync(tmp, { force: true });
  }
  fsyncDir(box.receipts);
}

export function readReceipt(
  box: Mailbox,
  msgId: string,
  consumer: string,
  stage: string,
): Receipt | undefined {
  try {
    return JSON.parse(
      readFileSync(join(box.receipts, receiptName(msgId, consumer, stage)), 'utf8'),
    ) as Receipt;
  } catch (error) {
    // Missing, or a torn file written by something that is not atomic: not there yet either way.
    if (errno(error) === 'ENOENT' || error instanceof SyntaxError) return undefined;
    throw error;
  }
}

export interface ReceiptFilter {
  msgId?: string;
  stage?: string;
}

/** A mailbox's receipts, oldest first. */
export function listReceipts(box: Mailbox, filter: ReceiptFilter = {}): Receipt[] {
  let names: string[];
  try {
    names = readdirSync(box.receipts);
  } catch (error) {
    if (errno(error) === 'ENOENT') return [];
    throw error;
  }
  const out: Array<Receipt & { at: bigint }> = [];
  for (const name of names) {
    if (!name.endsWith('.json') || !isSafeBaseName(name)) continue;
    if (filter.msgId && !name.startsWith(`${filter.msgId}__`)) continue;
    if (filter.stage && !name.endsWith(`__${filter.stage}.json`)) continue;
    try {
      const r = JSON.parse(readFileSync(join(box.receipts, name), 'utf8')) as Receipt;
      out.push({ ...r, at: parseRfc3339(r.emitted_at ?? '') ?? 0n });
    } catch {
      // skip unreadable receipt files, as AMQ does
    }
  }
  out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return out.map(({ at: _at, ...r }) => r);
}

/** Polls for one receipt; undefined when `timeoutMs` (0 = forever) runs out. */
export async function waitForReceipt(
  box: Mailbox,
  msgId: string,
  consumer: string,
  stage: string,
  options: { timeoutMs?: number; pollMs?: number; signal?: AbortSignal } = {},
): Promise<Receipt | undefined> {
  const { timeoutMs = 60_000, pollMs = 1000 } = options;
  const end = timeoutMs > 0 ? Date.now() + timeoutMs : Number.POSITIVE_INFINITY;
  for (;;) {
    const found = readReceipt(box, msgId, consumer, stage);
    if (found) return found;
    const left = end - Date.now();
    if (left <= 0 || options.signal?.aborted) return undefined;
    await new Promise((r) => setTimeout(r, Math.min(pollMs, left)));
  }
}
