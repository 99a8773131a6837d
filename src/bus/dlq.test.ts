import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatEnvelope, listDlq, moveToDlq, parseEnvelope, purgeDlq, readDlq, retryDlq } from './dlq.js';
import { DlqRetryError, MessageInvalidError } from './errors.js';
import { ensureMailbox, mailbox } from './layout.js';

function deadLetter() {
  const box = mailbox(mkdtempSync(join(tmpdir(), 'troupe-dlq-')), 'codex');
  ensureMailbox(box);
  const original = Buffer.from('---json\n{"schema":1\n---\nbody\n');
  writeFileSync(join(box.inboxCur, 'm.md'), original);
  const envelope = moveToDlq(box, {
    path: join(box.inboxCur, 'm.md'),
    filename: 'm.md',
    original,
    reason: 'parse_error',
    detail: 'invalid header JSON',
    sourceDir: 'cur',
  });
  return { box, original, envelope };
}

describe('DLQ', () => {
  it('writes the envelope AMQ writes (--- not ---json, key order, original bytes verbatim) and removes the message', () => {
    const { box, original, envelope } = deadLetter();
    expect(existsSync(join(box.inboxCur, 'm.md'))).toBe(false);
    const text = readFileSync(join(box.dlqNew, `${envelope.id}.md`), 'utf8');
    expect(text.startsWith('---\n{\n  "schema": "amq/dlq/v1",\n  "id": "dlq_')).toBe(true);
    const keys = [...text.matchAll(/^ {2}"(\w+)":/gm)].map((m) => m[1]);
    expect(keys).toEqual([
      'schema',
      'id',
      'original_id',
      'original_file',
      'failure_reason',
      'failure_detail',
      'failure_time',
      'retry_count',
      'retry_state',
      'source_dir',
    ]);
    expect(text.endsWith(`}\n---\n${original.toString()}`)).toBe(true);
    expect(envelope.original_id).toBe('m');
    expect(envelope.failure_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('read marks it inspected (new → cur); list shows it once', () => {
    const { box, envelope } = deadLetter();
    expect(readDlq(box, envelope.id).box).toBe('cur');
    expect(readdirSync(box.dlqNew)).toEqual([]);
    expect(listDlq(box).entries.map((e) => e.envelope.id)).toEqual([envelope.id]);
  });

  it('retries up to 3 times unless forced, and refuses while the original is in the inbox', () => {
    const { box, original, envelope } = deadLetter();
    const failAgain = () => {
      // the redelivered message was dead-lettered again: back to ready, inbox emptied
      rmSync(join(box.inboxNew, 'm.md'));
      const entry = listDlq(box).entries[0]!;
      writeFileSync(entry.file, formatEnvelope({ ...entry.envelope, retry_state: 'ready' }, original));
    };
    for (let i = 1; i <= 3; i++) {
      expect(retryDlq(box, envelope.id)).toMatchObject({ state: 'delivered', retry_count: i });
      expect(readFileSync(join(box.inboxNew, 'm.md'))).toEqual(original);
      expect(retryDlq(box, envelope.id).already).toBe(true); // delivered is terminal and idempotent
      const entry = listDlq(box).entries[0]!;
      writeFileSync(entry.file, formatEnvelope({ ...entry.envelope, retry_state: 'ready' }, original));
      if (i < 3) expect(() => retryDlq(box, envelope.id)).toThrow(/already in codex's inbox/);
      failAgain();
    }
    expect(() => retryDlq(box, envelope.id)).toThrow(DlqRetryError);
    expect(retryDlq(box, envelope.id, true).retry_count).toBe(4);
  });

  it('finishes a crash-left pending retry only when a delivered copy proves it', () => {
    const { box, original, envelope } = deadLetter();
    const file = join(box.dlqNew, `${envelope.id}.md`);
    writeFileSync(file, formatEnvelope({ ...envelope, retry_state: 'pending', retry_count: 1 }, original));
    expect(() => retryDlq(box, envelope.id)).toThrow(/no delivered copy proves it/);
    writeFileSync(join(box.inboxNew, 'm.md'), original);
    expect(retryDlq(box, envelope.id)).toMatchObject({ state: 'delivered', already: true });
  });

  it('refuses an envelope whose retry_state disagrees with its legacy flags', () => {
    const bad = Buffer.from(
      '---\n{"schema":"amq/dlq/v1","id":"d","retry_state":"ready","retry_pending":true}\n---\n',
    );
    expect(() => parseEnvelope(bad)).toThrow(MessageInvalidError);
    const legacy = parseEnvelope(Buffer.from('---\n{"id":"d","retry_delivered":true}\n---\nx'));
    expect(legacy.envelope.retry_state).toBe('delivered');
    expect(legacy.original.toString()).toBe('x');
  });

  it('purges both boxes, or only what is older than asked', () => {
    const { box, envelope } = deadLetter();
    expect(purgeDlq(box, { olderThanMs: 60_000 }).removed).toEqual([]);
    expect(purgeDlq(box, { dryRun: true }).removed).toEqual([envelope.id]);
    expect(purgeDlq(box).removed).toEqual([envelope.id]);
    expect(listDlq(box).entries).toEqual([]);
  });
});
