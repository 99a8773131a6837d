import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openBus } from './bus.js';
import { projectMail } from './task-mail.js';

describe("projectMail: a mailbox agent's replies", () => {
  it('are peeked without being read, only those sent since the stage was mailed, and read when marked', () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-mail-'));
    const mail = projectMail(dir, () => ['reviewer']);
    mail.askPerson({
      taskId: 'T-1',
      agent: 'reviewer',
      to: 'codex',
      kind: 'question',
      subject: 's',
      body: 'review this',
    });
    const bus = openBus(join(dir, '.agent-mail'));
    const before = new Date(Date.now() - 60_000).toISOString();
    bus.send({ from: 'codex', to: 'reviewer', thread: 'task/T-1', kind: 'answer', body: 'LGTM' });
    bus.send({ from: 'codex', to: 'reviewer', thread: 'task/T-2', body: 'another task' });
    bus.send({ from: 'user', to: 'reviewer', thread: 'task/T-1', body: 'someone else' });

    expect(mail.peekReplies('T-1', 'reviewer', 'codex', new Date(Date.now() + 60_000).toISOString())).toEqual(
      [],
    );
    const replies = mail.peekReplies('T-1', 'reviewer', 'codex', before);
    expect(replies.map((r) => r.body)).toEqual(['LGTM\n']);
    expect(mail.peekReplies('T-1', 'reviewer', 'codex', before)).toHaveLength(1); // still unread

    mail.markRead(
      'reviewer',
      replies.map((r) => r.id),
    );
    expect(mail.peekReplies('T-1', 'reviewer', 'codex', before)).toEqual([]);
    expect(bus.list('reviewer', { box: 'cur' }).items.map((m) => m.id)).toEqual([replies[0]!.id]);
  });
});

describe("projectMail: the person's asks", () => {
  it("are read once settled: only the agent's, on the task's thread (new → cur)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-mail-'));
    const mail = projectMail(dir, () => ['deployer', 'developer']);
    const ask = (taskId: string, agent: string) =>
      mail.askPerson({ taskId, agent, kind: 'review_request', subject: `approve ${agent}?`, body: 'b' });
    ask('T-1', 'deployer');
    ask('T-1', 'developer');
    ask('T-2', 'deployer');
    mail.markAsksRead('T-1', 'deployer');
    mail.markAsksRead('T-3', 'deployer'); // nothing asked: nothing to do

    const bus = openBus(join(dir, '.agent-mail'));
    const box = (which: 'new' | 'cur') =>
      bus
        .list('user', { box: which })
        .items.map((m) => `${m.thread} ${m.from}`)
        .sort();
    expect(box('cur')).toEqual(['task/T-1 deployer']);
    expect(box('new')).toEqual(['task/T-1 developer', 'task/T-2 deployer']);
  });
});
