import { join } from 'node:path';
import { parseDuration } from '../../../bus/duration.js';
import { messageFilename } from '../../../bus/handle.js';
import { loadMessage } from '../../../bus/inbox.js';
import { UsageError } from '../../../core/errors.js';
import { printable } from '../../../core/printable.js';
import type { CommandIo } from '../../command-io.js';
import { Exit } from '../../exit-codes.js';
import { type BusFlags, count, printJson, warn } from './context.js';
import { printDrained } from './messaging.js';
import { me, openFromFlags } from './open.js';

export async function receiptsWait(flags: BusFlags, io: CommandIo): Promise<number> {
  const { bus } = openFromFlags(flags, io, 'read');
  const stage = flags.stage ?? 'drained';
  if (stage !== 'drained' && stage !== 'dlq')
    throw new UsageError(`--stage expects drained or dlq, got '${stage}'`);
  let consumer = flags.consumer;
  if (!consumer) {
    // The recipient, from the copy in our outbox.
    const header = loadMessage(join(bus.mailbox(me(flags)).sent, messageFilename(flags.msgId!))).header;
    if (header.to.length !== 1) throw new UsageError('the message has several recipients: pass --consumer');
    consumer = header.to[0]!;
  }
  const receipt = await bus.waitForReceipt(consumer, flags.msgId!, stage, {
    timeoutMs: parseDuration(flags.timeout ?? '60s', '--timeout'),
    pollMs: parseDuration(flags.pollInterval ?? '1s', '--poll-interval'),
  });
  if (flags.json) printJson(io, receipt ? { event: 'matched', receipt } : { event: 'timeout' });
  else io.out(receipt ? `${receipt.stage} by ${receipt.consumer} at ${receipt.emitted_at}\n` : 'timeout\n');
  return receipt ? Exit.ok : Exit.timeout;
}

export async function watch(flags: BusFlags, io: CommandIo): Promise<number> {
  const { bus } = openFromFlags(flags, io);
  const handle = me(flags);
  const result = await bus.watch(handle, {
    timeoutMs: parseDuration(flags.timeout ?? '60s', '--timeout'),
    poll: flags.poll === true,
  });
  const parseErrors = result.warnings;
  if (flags.json) {
    printJson(io, {
      event: result.event,
      me: handle,
      count: result.messages.length,
      messages: result.messages,
      ...(parseErrors.length ? { parse_error: parseErrors } : {}),
    });
  } else if (result.event === 'timeout') io.out('timeout\n');
  else {
    for (const w of parseErrors) warn(io, w);
    for (const m of result.messages) io.out(`${m.created}  ${m.from}  ${m.id}  ${printable(m.subject)}\n`);
  }
  return result.event === 'timeout' ? Exit.timeout : Exit.ok;
}

export async function monitor(flags: BusFlags, io: CommandIo): Promise<number> {
  const { bus } = openFromFlags(flags, io);
  const handle = me(flags);
  const limit = count(flags.limit, '--limit', 20);
  const includeBody = flags.includeBody === true;
  const take = () =>
    flags.peek
      ? bus
          .list(handle, { limit, includeBody })
          .items.map((m) => ({ ...m, moved_to_cur: false, moved_to_dlq: false }))
      : bus.drain(handle, { limit, includeBody });
  let watchEvent: 'existing' | 'new_message' = 'existing';
  let items = take();
  if (items.length === 0) {
    const result = await bus.watch(handle, {
      timeoutMs: parseDuration(flags.timeout ?? '60s', '--timeout'),
      poll: flags.poll === true,
    });
    if (result.event === 'timeout') {
      if (flags.json)
        printJson(io, {
          event: 'timeout',
          mode: flags.peek ? 'peek' : 'drain',
          me: handle,
          count: 0,
          drained: [],
        });
      else io.out('timeout\n');
      return Exit.timeout;
    }
    watchEvent = 'new_message';
    items = take();
  }
  if (flags.json) {
    printJson(io, {
      event: items.length > 0 ? 'messages' : 'empty',
      watch_event: watchEvent,
      mode: flags.peek ? 'peek' : 'drain',
      session: bus.session ?? '',
      me: handle,
      count: items.length,
      drained: items,
    });
  } else printDrained(io, handle, items, includeBody);
  return Exit.ok;
}
