import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAmqrc } from './amqrc.js';
import { openBus } from './bus.js';
import { parseMessage } from './message.js';

function freshBus(agents = ['claude', 'codex']) {
  const root = join(mkdtempSync(join(tmpdir(), 'troupe-bus-')), '.agent-mail');
  const bus = openBus(root);
  bus.init(agents);
  return bus;
}

describe('MessageBus', () => {
  it('sends, drains once with a drained receipt, and keeps history in cur/', () => {
    const bus = freshBus();
    const sent = bus.send({ from: 'claude', to: 'codex', subject: 'Hi', kind: 'question', body: 'why?' });
    expect(sent.thread).toBe('p2p/claude__codex');
    expect(bus.list('codex').items.map((m) => m.id)).toEqual([sent.id]);
    const drained = bus.drain('codex', { includeBody: true });
    expect(drained).toMatchObject([
      { id: sent.id, priority: 'normal', kind: 'question', body: 'why?\n', moved_to_cur: true },
    ]);
    expect(bus.drain('codex')).toEqual([]);
    expect(bus.list('codex', { box: 'cur' }).items).toHaveLength(1);
    expect(bus.receipts('codex')).toMatchObject([
      { msg_id: sent.id, sender: 'claude', consumer: 'codex', stage: 'drained' },
    ]);
  });

  it('replies on the same thread, to the sender, with the mapped kind, refs and subject', () => {
    const bus = freshBus();
    const q = bus.send({
      from: 'claude',
      to: 'codex',
      subject: 'Q',
      kind: 'question',
      thread: 'task/42',
      body: 'x',
    });
    bus.drain('codex');
    const a = bus.reply('codex', q.id, { body: 'y' });
    expect(a).toMatchObject({ thread: 'task/42', to: ['claude'], subject: 'Re: Q' });
    const [item] = bus.drain('claude');
    expect(item).toMatchObject({ kind: 'answer', refs: [q.id], thread: 'task/42' });
    const again = bus.reply('claude', a.id, { body: 'z' });
    expect(again.subject).toBe('Re: Q');
    expect(bus.thread('task/42').map((m) => m.id)).toEqual([q.id, a.id, again.id]);
    expect(bus.thread('task/42', { limit: 1 }).map((m) => m.id)).toEqual([again.id]);
  });

  it('refuses what AMQ refuses: self-send, several recipients without a thread, bad kind, empty body', () => {
    const bus = freshBus();
    expect(() => bus.send({ from: 'claude', to: 'claude', body: 'x' })).toThrow(/yourself/);
    expect(bus.send({ from: 'claude', to: 'claude', body: 'x', allowSelf: true }).thread).toBe(
      'p2p/claude__claude',
    );
    expect(() => bus.send({ from: 'claude', to: ['codex', 'user'], body: 'x' })).toThrow(/--thread/);
    expect(() => bus.send({ from: 'claude', to: 'codex', body: 'x', kind: 'chat' as never })).toThrow(/kind/);
    expect(() => bus.send({ from: 'claude', to: 'codex', body: '  \n' })).toThrow(/empty/);
    expect(() => bus.send({ from: 'claude', to: '../x', body: 'x' })).toThrow(/invalid recipient/);
    expect(() => openBus(join(tmpdir(), 'nope-not-init')).send({ from: 'a', to: 'b', body: 'x' })).toThrow(
      /not initialized/,
    );
  });

  it('learns about handles another process added to meta/config.json since its last send', () => {
    const bus = freshBus();
    expect(bus.send({ from: 'claude', to: 'codex', body: 'x' }).warnings).toEqual([]);
    openBus(bus.root).init(['claude', 'codex', 'gemini'], true);
    expect(bus.send({ from: 'claude', to: 'gemini', body: 'x' }).warnings).toEqual([]);
    expect(bus.send({ from: 'claude', to: 'ghost', body: 'x' }).warnings).toEqual([
      'unknown handle(s): ghost (not in meta/config.json)',
    ]);
  });

  it('delivers to several recipients with one id, and warns about unknown handles unless strict', () => {
    const bus = freshBus();
    const sent = bus.send({
      from: 'claude',
      to: ['codex', 'user', 'newbie'],
      thread: 'decision/x',
      body: 'x',
    });
    expect(sent.delivered).toEqual(['codex', 'user', 'newbie']);
    expect(sent.warnings.join()).toMatch(/newbie/);
    for (const h of ['codex', 'user', 'newbie'])
      expect(bus.list(h).items.map((m) => m.id)).toEqual([sent.id]);
    const listed = bus.send({
      from: 'claude',
      to: [' Codex, user,', 'codex'],
      thread: 'decision/x',
      body: 'x',
    });
    expect(listed.to).toEqual(['codex', 'user']);
    const strict = openBus(bus.root, { strict: true });
    expect(() => strict.send({ from: 'claude', to: 'ghost', body: 'x' })).toThrow(/unknown handle/);
  });

  it('routes across sessions with p2p/<src>:<me>__<dst>:<to> and a reply_to that brings the reply back', () => {
    const base = freshBus().root;
    for (const s of ['alpha', 'beta']) openBus(join(base, s)).init(['claude', 'codex']);
    const alpha = openBus(join(base, 'alpha'), { baseRoot: base, session: 'alpha' });
    const beta = openBus(join(base, 'beta'), { baseRoot: base, session: 'beta' });
    const sent = alpha.send({ from: 'claude', to: 'codex', session: 'beta', body: 'hi' });
    expect(sent).toMatchObject({
      thread: 'p2p/alpha:claude__beta:codex',
      cross_session: true,
      root: beta.root,
    });
    const [got] = beta.drain('codex');
    expect(got!.reply_to).toBe('claude@alpha');
    const back = beta.reply('codex', got!.id, { body: 'ok' });
    expect(back.root).toBe(alpha.root);
    expect(alpha.drain('claude').map((m) => m.thread)).toEqual(['p2p/alpha:claude__beta:codex']);
  });

  it('federates with a peer project from .amqrc, never creating its mailboxes, and routes the reply back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-fed-'));
    const make = (name: string, peer: string) => {
      mkdirSync(join(dir, name));
      writeFileSync(
        join(dir, name, '.amqrc'),
        JSON.stringify({ root: '.agent-mail', project: name, peers: { [peer]: `../${peer}/.agent-mail` } }),
        { mode: 0o644 },
      );
      const rc = loadAmqrc(join(dir, name, '.amqrc'));
      const bus = openBus(rc.root, { amqrc: rc });
      bus.init(['claude', 'codex']);
      return bus;
    };
    const app = make('app', 'lib');
    const lib = make('lib', 'app');
    const sent = app.send({ from: 'claude', to: 'codex@lib', body: 'review the API?' });
    expect(sent).toMatchObject({ thread: 'p2p/app:claude__lib:codex', cross_project: true, root: lib.root });
    const [got] = lib.drain('codex');
    expect(got).toMatchObject({ reply_to: 'claude', reply_project: 'app', from_project: 'app' });
    lib.reply('codex', got!.id, { body: 'done' });
    const [back] = app.drain('claude');
    expect(back).toMatchObject({ from: 'codex', from_project: 'lib', thread: 'p2p/app:claude__lib:codex' });
    expect(() => app.send({ from: 'claude', to: 'ghost@lib', body: 'x' })).toThrow(/incomplete/);
    expect(readdirSync(join(lib.root, 'agents'))).not.toContain('ghost');
    expect(() => app.send({ from: 'claude', to: 'codex@nowhere', body: 'x' })).toThrow(/unknown peer/);
  });

  it('dead-letters an invalid message on drain with a dlq receipt, leaving the rest alone', () => {
    const bus = freshBus();
    const good = bus.send({ from: 'claude', to: 'codex', body: 'fine' });
    const box = bus.mailbox('codex');
    writeFileSync(
      join(box.inboxNew, '2000-01-01T00-00-00.000Z_pid1_00000000.md'),
      '---json\n{"schema":1,"id":"x","from":"Bad"}\n---\n',
    );
    const items = bus.drain('codex');
    expect(items.map((i) => [i.moved_to_cur, i.moved_to_dlq])).toEqual([
      [false, true],
      [true, false],
    ]);
    expect(items[0]!.parse_error).toMatch(/^invalid header: from 'Bad'/);
    expect(bus.dlqList('codex').entries[0]!.envelope.failure_reason).toBe('invalid_header');
    expect(bus.receipts('codex', { stage: 'dlq' })).toHaveLength(1);
    expect(parseMessage(readFileSync(join(box.inboxCur, `${good.id}.md`))).body).toBe('fine\n');
  });

  it('read claims a valid message and refuses an unknown id', () => {
    const bus = freshBus();
    const sent = bus.send({ from: 'claude', to: 'codex', body: 'b' });
    expect(bus.read('codex', sent.id)).toMatchObject({ body: 'b\n', box: 'new' });
    expect(bus.read('codex', `${sent.id}.md`).box).toBe('cur');
    expect(() => bus.read('codex', 'nope')).toThrow(/no message/);
  });

  it('watch sees existing mail at once and new mail when it lands, without consuming it', async () => {
    const bus = freshBus();
    expect((await bus.watch('codex', { timeoutMs: 100 })).event).toBe('timeout');
    const waiting = bus.watch('codex', { timeoutMs: 5000 });
    setTimeout(() => bus.send({ from: 'claude', to: 'codex', body: 'x' }), 50);
    expect((await waiting).event).toBe('new_message');
    const polled = await bus.watch('codex', { timeoutMs: 5000, poll: true });
    expect(polled).toMatchObject({ event: 'existing', mode: 'poll' });
    expect(bus.list('codex').items).toHaveLength(1);
  });

  it('waits for a receipt', async () => {
    const bus = freshBus();
    const sent = bus.send({ from: 'claude', to: 'codex', body: 'x' });
    expect(
      await bus.waitForReceipt('codex', sent.id, 'drained', { timeoutMs: 50, pollMs: 10 }),
    ).toBeUndefined();
    setTimeout(() => bus.drain('codex'), 30);
    expect(
      await bus.waitForReceipt('codex', sent.id, 'drained', { timeoutMs: 2000, pollMs: 10 }),
    ).toMatchObject({
      stage: 'drained',
    });
  });
});
