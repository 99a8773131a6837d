import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claim } from './claim.js';
import { deliver } from './deliver.js';
import { CollisionError, PartialDeliveryError } from './errors.js';
import { ensureMailbox, mailbox } from './layout.js';

const root = () => mkdtempSync(join(tmpdir(), 'troupe-bus-'));
const bytes = Buffer.from('---json\n{}\n---\nhello\n');

describe('deliver', () => {
  it('publishes into new/, leaves nothing in tmp/, and links the outbox copy', () => {
    const r = root();
    const to = mailbox(r, 'codex');
    const from = mailbox(r, 'claude');
    const report = deliver([{ box: to }], 'm.md', bytes, from);
    expect(report.delivered).toEqual(['codex']);
    expect(readFileSync(join(to.inboxNew, 'm.md'))).toEqual(bytes);
    expect(readFileSync(join(from.sent, 'm.md'))).toEqual(bytes);
    expect(statSync(join(from.sent, 'm.md')).ino).toBe(statSync(join(to.inboxNew, 'm.md')).ino);
    expect(readdirSync(to.inboxTmp)).toEqual([]);
  });

  it('still writes the outbox copy when new/ already held the same bytes (a retried send)', () => {
    const r = root();
    const to = mailbox(r, 'codex');
    const from = mailbox(r, 'claude');
    deliver([{ box: to }], 'm.md', bytes);
    const report = deliver([{ box: to }], 'm.md', bytes, from);
    expect(report).toMatchObject({ delivered: ['codex'], outbox: join(from.sent, 'm.md') });
    expect(readFileSync(join(from.sent, 'm.md'))).toEqual(bytes);
    expect(readdirSync(to.inboxTmp)).toEqual([]);
    expect(readdirSync(from.sent)).toEqual(['m.md']);
  });

  it('counts identical bytes under the same name as delivered, and never overwrites different bytes', () => {
    const r = root();
    const to = mailbox(r, 'codex');
    deliver([{ box: to }], 'm.md', bytes);
    expect(deliver([{ box: to }], 'm.md', bytes).delivered).toEqual(['codex']);
    const other = Buffer.from('---json\n{}\n---\nother\n');
    expect(() => deliver([{ box: to }], 'm.md', other)).toThrow(PartialDeliveryError);
    expect(readFileSync(join(to.inboxNew, 'm.md'))).toEqual(bytes);
    // the attempt is kept in tmp, so both copies survive
    const kept = readdirSync(to.inboxTmp);
    expect(kept).toHaveLength(1);
    expect(readFileSync(join(to.inboxTmp, kept[0]!))).toEqual(other);
  });

  it('is not blocked by leftover tmp files of an earlier, crashed attempt', () => {
    const r = root();
    const to = mailbox(r, 'codex');
    ensureMailbox(to);
    writeFileSync(join(to.inboxTmp, '.m.md.tmp-1-1-aaaaaaaaaaaa'), 'partial');
    deliver([{ box: to }], 'm.md', bytes);
    expect(readFileSync(join(to.inboxNew, 'm.md'))).toEqual(bytes);
    expect(readFileSync(join(to.inboxTmp, '.m.md.tmp-1-1-aaaaaaaaaaaa'), 'utf8')).toBe('partial');
  });

  it('reports a partial multi-recipient delivery honestly and cleans up the rest', () => {
    const r = root();
    const [a, b, c] = ['a', 'b', 'c'].map((h) => mailbox(r, h)) as [
      ReturnType<typeof mailbox>,
      ReturnType<typeof mailbox>,
      ReturnType<typeof mailbox>,
    ];
    ensureMailbox(b);
    writeFileSync(join(b.inboxNew, 'm.md'), 'different');
    let error: PartialDeliveryError | undefined;
    try {
      deliver([{ box: a }, { box: b }, { box: c }], 'm.md', bytes);
    } catch (e) {
      error = e as PartialDeliveryError;
    }
    expect(error).toBeInstanceOf(PartialDeliveryError);
    expect([error!.delivered, error!.failed, error!.pending]).toEqual([['a'], ['b'], ['c']]);
    expect(existsSync(join(a.inboxNew, 'm.md'))).toBe(true);
    expect(existsSync(join(c.inboxNew, 'm.md'))).toBe(false);
    expect(readdirSync(c.inboxTmp)).toEqual([]);
  });

  it('never creates anything in a peer mailbox that is incomplete', () => {
    const r = root();
    const peer = mailbox(r, 'codex');
    expect(() => deliver([{ box: peer, existingOnly: true }], 'm.md', bytes)).toThrow(/incomplete/);
    expect(existsSync(peer.dir)).toBe(false);
  });
});

describe('claim', () => {
  it('has exactly one winner; the others lose quietly', () => {
    const r = root();
    const box = mailbox(r, 'codex');
    deliver([{ box }], 'm.md', bytes);
    const results = Array.from({ length: 8 }, () => claim(box.inboxNew, box.inboxCur, 'm.md'));
    expect(results.filter((x) => x === 'claimed')).toHaveLength(1);
    expect(results.filter((x) => x === 'lost')).toHaveLength(7);
  });

  it('refuses to replace an existing cur/ file, keeping both', () => {
    const r = root();
    const box = mailbox(r, 'codex');
    deliver([{ box }], 'm.md', bytes);
    writeFileSync(join(box.inboxCur, 'm.md'), 'older');
    expect(() => claim(box.inboxNew, box.inboxCur, 'm.md')).toThrow(CollisionError);
    expect(readFileSync(join(box.inboxCur, 'm.md'), 'utf8')).toBe('older');
    expect(readFileSync(join(box.inboxNew, 'm.md'))).toEqual(bytes);
  });
});
