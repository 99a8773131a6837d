import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatEnvelope, parseEnvelope } from '../src/bus/dlq.js';
import { goJson } from '../src/bus/go-json.js';
import { formatMessage, parseMessage } from '../src/bus/message.js';
import { repoRoot, troupe } from './support/troupe.js';

/** Fixtures written by hand from the AMQ format reference: troupe must read them and write the same bytes. */
const fixtures = join(repoRoot, 'test', 'fixtures', 'amq');
const fixture = (name: string) => join(fixtures, name);
const M1 = '2026-08-22T11-12-13.123Z_pid4242_9f3a01bc';
const M2 = '2026-08-22T11-15-00.5Z_pid4243_00c0ffee';
const M3 = '2026-08-22T11-20-00Z_pid7_0badcafe';
const CRLF = '2026-08-22T11-30-00.000Z_pid9_crlf0001';
const DLQ_READY = 'dlq_1787397660000000000_4242_a1b2c3d4e5f6';
const DLQ_DONE = 'dlq_1787397720000000000_4242_0f0e0d0c0b0a';

async function json<T>(cwd: string, args: string[], env: Record<string, string> = {}): Promise<T> {
  const r = await troupe(cwd, [...args, '--json'], env);
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

async function amqRoot() {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-compat-'));
  const root = join(dir, '.agent-mail');
  const init = await troupe(dir, ['bus', 'init', '--root', root, '--agents', 'claude,codex']);
  expect(init.code, init.stderr).toBe(0);
  copyFileSync(fixture('config.json'), join(root, 'meta', 'config.json'));
  const put = (name: string, handle: string, box = 'inbox/new') =>
    copyFileSync(fixture(name), join(root, 'agents', handle, box, name));
  put(`${M1}.md`, 'codex');
  put(`${M2}.md`, 'claude');
  put(`${M2}.md`, 'user');
  put(`${M3}.md`, 'claude');
  put(`${CRLF}.md`, 'claude');
  put('receipt-drained.json', 'codex', 'receipts');
  put(`${DLQ_READY}.md`, 'codex', 'dlq/new');
  put(`${DLQ_DONE}.md`, 'codex', 'dlq/new');
  return { dir, root, env: { AM_ROOT: root } };
}

describe('AMQ compatibility (hand-written fixtures)', () => {
  it('lists, reads and drains AMQ messages, including CRLF files and Go-escaped headers', async () => {
    const { dir, env } = await amqRoot();
    const listed = await json<Array<{ id: string }>>(dir, ['bus', 'list', '--me', 'claude'], env);
    expect(listed.map((m) => m.id)).toEqual([M2, M3, CRLF]);

    const read = await json<{ header: Record<string, unknown>; body: string }>(
      dir,
      ['bus', 'read', '--me', 'codex', '--id', M1],
      env,
    );
    expect(read.header).toMatchObject({
      from: 'claude',
      kind: 'review_request',
      labels: ['area:cli', 'handoff'],
    });
    expect(read.header.created).toBe('2026-08-22T11:12:13.123456789Z');
    expect(read.body).toBe('Please review internal/cli/send.go\n');

    const drained = await json<{ drained: Array<Record<string, unknown>> }>(
      dir,
      ['bus', 'drain', '--me', 'claude', '--include-body'],
      env,
    );
    expect(drained.drained.map((m) => m.id)).toEqual([M2, M3, CRLF]);
    expect(drained.drained[0]).toMatchObject({
      subject: 'Re: a < b && c > d',
      context: { a: { b: 2, y: [1, 'two'] }, z: true },
      reply_to: 'codex@collab',
      reply_project: 'infra-lib',
      from_project: 'infra-lib',
      body: 'Proposal: align both repos on v0.24.\nLine two — with UTF-8.\n',
    });
    expect(drained.drained[1]).toMatchObject({ body: '', subject: '', priority: '' });
    expect(drained.drained[2]).toMatchObject({ body: 'written on Windows\n', moved_to_cur: true });
  });

  it('writes byte-identical messages, envelopes and receipts for what it parses', () => {
    for (const name of [M1, M2, M3]) {
      const bytes = readFileSync(fixture(`${name}.md`));
      const m = parseMessage(bytes);
      expect(formatMessage(m.header, m.body).toString(), name).toBe(bytes.toString());
    }
    for (const name of [DLQ_READY, DLQ_DONE]) {
      const bytes = readFileSync(fixture(`${name}.md`));
      const { envelope, original } = parseEnvelope(bytes);
      expect(formatEnvelope(envelope, original).toString(), name).toBe(bytes.toString());
    }
    for (const name of ['receipt-drained.json', 'receipt-dlq.json', 'config.json', 'presence.json']) {
      const text = readFileSync(fixture(name), 'utf8');
      expect(`${goJson(JSON.parse(text))}\n`, name).toBe(text);
    }
  });

  it('reads AMQ receipts and writes its own in the same shape', async () => {
    const { dir, root, env } = await amqRoot();
    await json(dir, ['bus', 'drain', '--me', 'codex'], env);
    const receipts = await json<Array<{ msg_id: string; stage: string }>>(
      dir,
      ['bus', 'receipts', 'list', '--me', 'codex'],
      env,
    );
    expect(receipts.map((r) => r.stage)).toEqual(['drained', 'drained']);
    const ours = readFileSync(
      join(root, 'agents', 'codex', 'receipts', `${M1}__codex__drained.json`),
      'utf8',
    );
    const theirs = readFileSync(fixture('receipt-drained.json'), 'utf8');
    const keys = (text: string) => [...text.matchAll(/^ {2}"(\w+)":/gm)].map((m) => m[1]);
    expect(keys(ours)).toEqual(keys(theirs));
  });

  it('lists, inspects and retries AMQ dead letters; a delivered one is not delivered twice', async () => {
    const { dir, root, env } = await amqRoot();
    const list = await json<Array<{ id: string; retry_state: string; retry_count: number }>>(
      dir,
      ['bus', 'dlq', 'list', '--me', 'codex'],
      env,
    );
    expect(list.map((e) => [e.id, e.retry_state, e.retry_count])).toEqual([
      [DLQ_READY, 'ready', 1],
      [DLQ_DONE, 'delivered', 2],
    ]);
    const retried = await json<{ state: string; retry_count: number }>(
      dir,
      ['bus', 'dlq', 'retry', '--me', 'codex', '--id', DLQ_READY],
      env,
    );
    expect(retried).toMatchObject({ state: 'delivered', retry_count: 2 });
    const original = parseEnvelope(readFileSync(fixture(`${DLQ_READY}.md`))).original;
    const redelivered = readFileSync(
      join(root, 'agents', 'codex', 'inbox', 'new', '2026-08-22T11-40-00.000Z_pid11_deadbeef.md'),
    );
    expect(redelivered.equals(original)).toBe(true);
    const again = await json<{ already?: boolean }>(
      dir,
      ['bus', 'dlq', 'retry', '--me', 'codex', '--id', DLQ_DONE],
      env,
    );
    expect(again.already).toBe(true);
    expect(readdirSync(join(root, 'agents', 'codex', 'inbox', 'new'))).not.toContain(
      '2026-08-22T11-42-00.000Z_pid11_feedface.md',
    );
  });

  it('what troupe sends parses back to exactly the header it reports', async () => {
    const { dir, root, env } = await amqRoot();
    const sent = await json<{ id: string; created: string }>(
      dir,
      [
        'bus',
        'send',
        '--me',
        'claude',
        '--to',
        'codex',
        '--subject',
        '<b> & c',
        '--labels',
        'x,y',
        '--context',
        '{"z":1,"a":"<"}',
        '--body',
        'hi',
      ],
      env,
    );
    const bytes = readFileSync(join(root, 'agents', 'codex', 'inbox', 'new', `${sent.id}.md`));
    expect(bytes.toString()).toContain('"subject": "\\u003cb\\u003e \\u0026 c"');
    const m = parseMessage(bytes);
    expect(m.header).toEqual({
      schema: 1,
      id: sent.id,
      from: 'claude',
      to: ['codex'],
      thread: 'p2p/claude__codex',
      subject: '<b> & c',
      created: sent.created,
      labels: ['x', 'y'],
      context: { a: '<', z: 1 },
    });
    expect(formatMessage(m.header, m.body).equals(bytes)).toBe(true);
    expect(
      readFileSync(join(root, 'agents', 'claude', 'outbox', 'sent', `${sent.id}.md`)).equals(bytes),
    ).toBe(true);
  });

  it('federates through .amqrc peers: send to codex@infra-lib and the reply comes back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-fed-'));
    for (const [project, rc] of [
      ['app', 'amqrc-app.json'],
      ['infra-lib', 'amqrc-infra-lib.json'],
    ] as const) {
      mkdirSync(join(dir, project));
      copyFileSync(fixture(rc), join(dir, project, '.amqrc'));
      chmodSync(join(dir, project, '.amqrc'), 0o644);
      const init = await troupe(join(dir, project), ['bus', 'init', '--agents', 'claude,codex']);
      expect(init.code, init.stderr).toBe(0);
    }
    const app = join(dir, 'app');
    const lib = join(dir, 'infra-lib');
    const sent = await json<{ thread: string; cross_project: boolean }>(app, [
      'bus',
      'send',
      '--me',
      'claude',
      '--to',
      'codex@infra-lib',
      '--body',
      'Can you review the shared API change?',
    ]);
    expect(sent).toMatchObject({ thread: 'p2p/app:claude__infra-lib:codex', cross_project: true });
    const got = await json<{ drained: Array<{ id: string; reply_project: string }> }>(lib, [
      'bus',
      'drain',
      '--me',
      'codex',
    ]);
    expect(got.drained[0]!.reply_project).toBe('app');
    await json(lib, ['bus', 'reply', '--me', 'codex', '--id', got.drained[0]!.id, '--body', 'LGTM']);
    const back = await json<{ drained: Array<{ from: string; from_project: string; thread: string }> }>(app, [
      'bus',
      'drain',
      '--me',
      'claude',
    ]);
    expect(back.drained).toMatchObject([{ from: 'codex', from_project: 'infra-lib', thread: sent.thread }]);
  });
});
