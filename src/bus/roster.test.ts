import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openBus } from './bus.js';
import { roster } from './roster.js';
import { acquireWakeLock, wakeLockPath } from './wake-lock.js';

function bus() {
  const b = openBus(mkdtempSync(join(tmpdir(), 'troupe-roster-')));
  b.init(['claude', 'codex', 'gemini']);
  return b;
}

const presenceOf = (root: string, now?: number) =>
  Object.fromEntries(roster(root, now).map((e) => [e.handle, e.presence]));

describe('the roster', () => {
  it('is active when seen lately, idle when it says so, offline when never seen or long ago', () => {
    const b = bus();
    b.send({ from: 'claude', to: 'user', body: 'hi' });
    b.setPresence('codex', 'idle', 'lunch');
    expect(presenceOf(b.root)).toEqual({
      claude: 'active',
      codex: 'idle',
      gemini: 'offline',
      user: 'offline',
    });
    expect(presenceOf(b.root, Date.now() + 11 * 60 * 1000)).toMatchObject({
      claude: 'offline',
      codex: 'offline',
    });
    b.setPresence('claude', 'offline');
    expect(presenceOf(b.root).claude).toBe('offline');
  });

  it("counts each inbox's unread and read mail, and shows a running or stale wake", () => {
    const b = bus();
    const first = b.send({ from: 'claude', to: 'user', body: 'one' });
    b.send({ from: 'claude', to: 'user', body: 'two' });
    b.read('user', first.id);
    acquireWakeLock(b.mailbox('gemini'), { agent: 'gemini', root: b.root });
    mkdirSync(dirname(wakeLockPath(b.mailbox('codex'))), { recursive: true });
    writeFileSync(wakeLockPath(b.mailbox('codex')), JSON.stringify({ pid: -1, host: 'x', started: 'x' }));
    const byHandle = Object.fromEntries(roster(b.root).map((e) => [e.handle, e]));
    expect(byHandle.user?.backlog).toEqual({ new: 1, cur: 1 });
    expect(byHandle.gemini).toMatchObject({ wake: 'running', presence: 'active' });
    expect(byHandle.codex).toMatchObject({ wake: 'stale', presence: 'offline' });
  });
});
