import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { messageOf } from '../core/errors.js';
import { listDlq } from './dlq.js';
import { messageFilename } from './handle.js';
import { loadMessage, mailNames } from './inbox.js';
import { mailbox, mailboxHandles } from './layout.js';
import type { Header } from './message.js';
import { listReceipts } from './receipts.js';
import { rootIdentity } from './shell-context.js';

/**
 * `trace <id>` (AMQ's `amq/trace/v1`, docs/trace.md): a read-only join over the evidence one root
 * holds of a message — its copies, the addressing its header records, the inboxes and DLQs it is
 * in now, its receipts, the messages that refer to it. Nothing is inferred without a file: the
 * notification leg is `no_evidence` (troupe keeps no ledger of notices).
 */

export type LegStatus = 'evidence' | 'no_evidence' | 'error';

export interface Leg {
  status: LegStatus;
  evidence: Array<Record<string, unknown>>;
  detail?: string;
  next_step?: string;
  state?: string;
}

export interface Trace {
  schema: 'amq/trace/v1';
  message_id: string;
  status: 'found' | 'partial' | 'not_found';
  root: string;
  root_identity?: string;
  legs: Record<'message' | 'route' | 'delivery' | 'dlq' | 'receipts' | 'thread' | 'notification', Leg>;
}

const leg = (evidence: Array<Record<string, unknown>>, none: { detail: string; next_step: string }): Leg =>
  evidence.length > 0 ? { status: 'evidence', evidence } : { status: 'no_evidence', evidence, ...none };

export function traceMessage(root: string, id: string, troupe = 'troupe'): Trace {
  const name = messageFilename(id);
  const msgId = name.slice(0, -3);
  const handles = mailboxHandles(root);
  const copies: Array<Record<string, unknown>> = [];
  const errors: string[] = [];
  let header: Header | undefined;
  for (const handle of handles) {
    const box = mailbox(root, handle);
    for (const [dir, kind] of [
      [box.inboxNew, 'inbox_new'],
      [box.inboxCur, 'inbox_cur'],
      [box.sent, 'outbox_sent'],
    ] as const) {
      const path = join(dir, name);
      if (!existsSync(path)) continue;
      copies.push({ kind, agent: handle, path });
      if (header) continue;
      try {
        header = loadMessage(path).header;
      } catch (error) {
        errors.push(`${path}: ${messageOf(error)}`);
      }
    }
  }
  const dlq: Array<Record<string, unknown>> = [];
  const receipts: Array<Record<string, unknown>> = [];
  const related: Array<Record<string, unknown>> = [];
  for (const handle of handles) {
    const box = mailbox(root, handle);
    try {
      for (const e of listDlq(box).entries) {
        if (e.envelope.original_id !== msgId && e.envelope.original_file !== name) continue;
        dlq.push({
          agent: handle,
          dlq_id: e.envelope.id,
          box: e.box,
          failure_reason: e.envelope.failure_reason,
          failure_detail: e.envelope.failure_detail,
          retry_state: e.envelope.retry_state,
          path: e.file,
        });
      }
    } catch (error) {
      errors.push(`${box.dlqNew}: ${messageOf(error)}`);
    }
    for (const r of listReceipts(box, { msgId })) receipts.push({ ...r });
  }
  if (header) {
    for (const ref of header.refs ?? []) related.push({ relation: 'refers_to', message_id: ref });
    related.push(...referrers(root, handles, header.thread, msgId));
  }
  const delivery = copies
    .filter((c) => c.kind !== 'outbox_sent')
    .map((c) => ({ ...c, state: c.kind === 'inbox_new' ? 'unread' : 'read', durability: 'no_evidence' }));
  const route = header
    ? [
        {
          from: header.from,
          to: header.to,
          thread: header.thread,
          ...(header.reply_to ? { reply_to: header.reply_to } : {}),
          ...(header.reply_project ? { reply_project: header.reply_project } : {}),
          ...(header.from_project ? { from_project: header.from_project } : {}),
          note: "the header's addressing, not a record of the route chosen at send time",
        },
      ]
    : [];
  const legs: Trace['legs'] = {
    message: leg(copies, {
      detail: `no copy of ${name} in any inbox or outbox of ${root}`,
      next_step: 'check the id, and trace it in the root it was sent from or to (--root, --session)',
    }),
    route: leg(route, {
      detail: 'no readable copy of the message, so no addressing to show',
      next_step: `\`${troupe} bus route explain --to <handle>\` shows how mail would be routed now`,
    }),
    delivery: leg(delivery, {
      detail: 'no inbox holds the message now',
      next_step: 'look in the dlq leg, and in the root of the other session or project',
    }),
    dlq: leg(dlq, {
      detail: 'no dead letter holds the message',
      next_step: `\`${troupe} bus dlq list --me <handle>\` lists dead letters`,
    }),
    receipts: leg(receipts, {
      detail: 'no drained or dlq receipt for the message',
      next_step: 'it has not been consumed yet; a receipt is the only proof that it was',
    }),
    thread: leg(related, {
      detail: 'the message refers to no other message',
      next_step: header ? `\`${troupe} bus thread --id ${header.thread}\` lists its thread` : 'none',
    }),
    notification: {
      status: 'no_evidence',
      state: 'ledger_absent',
      evidence: [],
      detail: 'troupe keeps no ledger of the notices its wakes type',
      next_step: `run \`${troupe} bus doctor --ops\` for current wake health; do not infer that a notice was seen`,
    },
  };
  if (errors.length > 0) {
    legs.message = { ...legs.message, status: legs.message.evidence.length ? 'evidence' : 'error' };
    legs.message.detail = errors.join('; ');
    legs.message.next_step ??= 'inspect the files named';
  }
  const found = (['message', 'route', 'delivery', 'dlq', 'receipts', 'thread'] as const).some(
    (k) => legs[k].status === 'evidence',
  );
  const rootId = rootIdentity(root);
  return {
    schema: 'amq/trace/v1',
    message_id: msgId,
    status: !found ? 'not_found' : errors.length > 0 ? 'partial' : 'found',
    root,
    ...(rootId ? { root_identity: rootId } : {}),
    legs,
  };
}

/** The messages on the same thread whose `refs` name this one (its replies), each once. */
function referrers(
  root: string,
  handles: string[],
  thread: string,
  msgId: string,
): Array<Record<string, unknown>> {
  const seen = new Set<string>();
  const out: Array<Record<string, unknown>> = [];
  for (const handle of handles) {
    const box = mailbox(root, handle);
    for (const dir of [box.inboxNew, box.inboxCur, box.sent]) {
      for (const n of mailNames(dir)) {
        try {
          const h = loadMessage(join(dir, n)).header;
          if (h.thread !== thread || seen.has(h.id) || !h.refs?.includes(msgId)) continue;
          seen.add(h.id);
          out.push({ relation: 'referred_by', message_id: h.id, from: h.from });
        } catch {
          // unreadable: not evidence
        }
      }
    }
  }
  return out;
}
