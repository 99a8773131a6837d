import { renameSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { messageOf, NotFoundError } from '../core/errors.js';
import { errno, fsyncDir, publishNoReplace, writeExclusive, writeFileAtomic } from './durable.js';
import { PartialDeliveryError } from './errors.js';
import { attemptName } from './ids.js';
import { ensureMailbox, forgetMailbox, type Mailbox, missingLeaves } from './layout.js';

export interface Recipient {
  box: Mailbox;
  /** Cross-project: the peer's mailbox must already be complete; nothing is created there. */
  existingOnly?: boolean;
}

export interface DeliveryReport {
  delivered: string[];
  /** Committed, but fsync of `new/` failed: the name may not survive a power loss. */
  indeterminate: string[];
  outbox?: string;
  outboxError?: string;
}

/**
 * AMQ's DeliverToInboxes: stage every recipient (exclusive tmp attempt, fsync of the file),
 * then commit each with a no-replace publish into `new/`, then fsync each `new/`. Staging
 * failures deliver nothing; a commit failure leaves earlier recipients delivered and is reported
 * as a PartialDeliveryError. `outbox` gets the same bytes: the first attempt itself, renamed into
 * `sent/` once it is linked into `new/` (no extra write or fsync), or a copy across devices.
 */
export function deliver(
  recipients: Recipient[],
  filename: string,
  bytes: Buffer,
  outbox?: Mailbox,
): DeliveryReport {
  const staged: string[] = [];
  try {
    for (const r of recipients) staged.push(stage(r, filename, bytes));
  } catch (error) {
    for (const tmp of staged) rmSync(tmp, { force: true });
    throw error;
  }

  const report: DeliveryReport = { delivered: [], indeterminate: [] };
  for (let i = 0; i < recipients.length; i++) {
    const r = recipients[i]!;
    const tmp = staged[i]!;
    const first = i === 0;
    try {
      publishNoReplace(tmp, join(r.box.inboxNew, filename), bytes, first && outbox !== undefined);
    } catch (error) {
      // The failed attempt stays in tmp (on a collision it is the only copy of these bytes).
      for (const rest of staged.slice(i + 1)) rmSync(rest, { force: true });
      const handles = recipients.map((x) => x.box.handle);
      throw new PartialDeliveryError(report.delivered, [r.box.handle], handles.slice(i + 1), error);
    }
    if (first && outbox) recordOutbox(report, tmp, outbox, filename, bytes);
    report.delivered.push(r.box.handle);
  }
  for (const r of recipients) {
    try {
      fsyncDir(r.box.inboxNew);
    } catch {
      report.indeterminate.push(r.box.handle);
    }
  }
  return report;
}

function stage(r: Recipient, filename: string, bytes: Buffer): string {
  if (r.existingOnly) {
    const missing = missingLeaves(r.box);
    if (missing.length > 0) {
      throw new NotFoundError(`peer mailbox ${r.box.dir} is incomplete (missing ${missing.join(', ')})`);
    }
  } else {
    ensureMailbox(r.box);
  }
  let tmp: string;
  try {
    tmp = writeExclusive(r.box.inboxTmp, attemptName(filename), bytes);
  } catch (error) {
    // Someone removed the mailbox since this process created it: create it again, once.
    if (errno(error) !== 'ENOENT' || r.existingOnly) throw error;
    forgetMailbox(r.box);
    ensureMailbox(r.box);
    tmp = writeExclusive(r.box.inboxTmp, attemptName(filename), bytes);
  }
  // AMQ also fsyncs tmp/ here. troupe does not: the file's bytes are fsynced, and the name that
  // matters is the one published into new/, whose directory is fsynced after the publish. A lost
  // tmp/ entry after a power cut loses nothing (the inode is linked from new/, or the message was
  // never delivered and the send is retried).
  return tmp;
}

function recordOutbox(report: DeliveryReport, tmp: string, outbox: Mailbox, filename: string, bytes: Buffer) {
  const dest = join(outbox.sent, filename);
  try {
    ensureMailbox(outbox);
    // the attempt, already linked into new/, becomes the sent copy: one rename instead of a
    // link and an unlink
    renameSync(tmp, dest);
    report.outbox = dest;
    return;
  } catch {
    // another device (a peer project), or the attempt is gone (new/ already held these bytes)
  }
  try {
    writeFileAtomic(outbox.sent, filename, bytes);
    report.outbox = dest;
  } catch (error) {
    report.outboxError = messageOf(error);
  } finally {
    removeAttempt(tmp);
  }
}

/** The attempt file, once linked where it belongs (unlink alone: rmSync would stat it twice first). */
function removeAttempt(tmp: string): void {
  try {
    unlinkSync(tmp);
  } catch (error) {
    if (errno(error) !== 'ENOENT') throw error;
  }
}
