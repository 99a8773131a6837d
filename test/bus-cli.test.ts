import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { troupe } from './support/troupe.js';

async function ok<T = unknown>(cwd: string, args: string[], env: Record<string, string> = {}): Promise<T> {
  const r = await troupe(cwd, [...args, '--json'], env);
  if (r.code !== 0) throw new Error(`troupe ${args.join(' ')}: exit ${r.code}\n${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

describe('troupe bus (AMQ smoke sequence)', () => {
  it('init → doctor → send → list → read → list --cur → receipt → thread → presence → cleanup', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-buscli-'));
    const env = { AM_ROOT: join(dir, '.agent-mail') };
    await ok(dir, ['bus', 'init', '--agents', 'claude,codex'], env);
    const doctor = await ok<{ summary: { error: number } }>(dir, ['bus', 'doctor'], env);
    expect(doctor.summary.error).toBe(0);
    const sent = await ok<{ id: string; thread: string }>(
      dir,
      ['bus', 'send', '--me', 'claude', '--to', 'codex', '--subject', 'Hi', '--body', 'hello codex'],
      env,
    );
    expect(sent.thread).toBe('p2p/claude__codex');
    expect(
      (await ok<Array<{ id: string }>>(dir, ['bus', 'list', '--me', 'codex', '--new'], env)).map((m) => m.id),
    ).toEqual([sent.id]);
    const read = await troupe(dir, ['bus', 'read', '--me', 'codex', '--id', sent.id], env);
    expect(read).toMatchObject({ code: 0, stdout: 'hello codex' });
    expect(
      (await ok<Array<{ id: string }>>(dir, ['bus', 'list', '--me', 'codex', '--cur'], env)).map((m) => m.id),
    ).toEqual([sent.id]);
    expect(
      existsSync(join(env.AM_ROOT, 'agents', 'codex', 'receipts', `${sent.id}__codex__drained.json`)),
    ).toBe(true);
    expect(
      (await ok<Array<{ id: string }>>(dir, ['bus', 'thread', '--id', sent.thread], env)).map((m) => m.id),
    ).toEqual([sent.id]);
    await ok(
      dir,
      ['bus', 'presence', 'set', '--me', 'codex', '--status', 'busy', '--note', 'reviewing'],
      env,
    );
    const presence = await ok<Array<{ handle: string; status: string }>>(
      dir,
      ['bus', 'presence', 'list'],
      env,
    );
    expect(presence.find((p) => p.handle === 'codex')?.status).toBe('busy');
    const stale = join(env.AM_ROOT, 'agents', 'codex', 'inbox', 'tmp', '.x.md.tmp-1-1-abcdefabcdef');
    writeFileSync(stale, 'partial');
    utimesSync(stale, new Date(Date.now() - 7200_000), new Date(Date.now() - 7200_000));
    const cleaned = await ok<{ files: string[] }>(
      dir,
      ['bus', 'cleanup', '--tmp-older-than', '1h', '--yes'],
      env,
    );
    expect(cleaned.files).toEqual([stale]);
    expect(existsSync(stale)).toBe(false);
  });

  it('waits for a drained receipt, and times out with exit 4 while the message stays delivered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-buscli-'));
    const env = { AM_ROOT: join(dir, '.agent-mail') };
    await ok(dir, ['bus', 'init', '--agents', 'claude,codex'], env);
    const r = await troupe(
      dir,
      [
        'bus',
        'send',
        '--me',
        'claude',
        '--to',
        'codex',
        '--body',
        'x',
        '--wait-for',
        'drained',
        '--wait-timeout',
        '300ms',
        '--json',
      ],
      env,
    );
    expect(r.code).toBe(4);
    expect(JSON.parse(r.stdout)).toMatchObject({ delivered: ['codex'], wait: { event: 'timeout' } });
    expect((await troupe(dir, ['bus', 'watch', '--me', 'claude', '--timeout', '200ms'], env)).code).toBe(4);
    expect((await troupe(dir, ['bus', 'monitor', '--me', 'claude', '--timeout', '200ms'], env)).code).toBe(4);
    const watched = await ok<{ event: string; count: number }>(
      dir,
      ['bus', 'watch', '--me', 'codex', '--timeout', '5s'],
      env,
    );
    expect(watched).toMatchObject({ event: 'existing', count: 1 });
    const monitored = await ok<{ event: string; count: number }>(
      dir,
      ['bus', 'monitor', '--me', 'codex'],
      env,
    );
    expect(monitored).toMatchObject({ event: 'messages', count: 1 });
  });

  it("keeps AMQ's exit codes: 2 usage, 3 not found, 5 context mismatch", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-buscli-'));
    const root = join(dir, '.agent-mail');
    const env = { AM_ROOT: root };
    expect(
      (await troupe(dir, ['bus', 'send', '--me', 'claude', '--to', 'codex', '--body', 'x'], env)).code,
    ).toBe(3); // not initialized
    await ok(dir, ['bus', 'init', '--agents', 'claude,codex'], env);
    expect((await troupe(dir, ['bus', 'read', '--me', 'codex', '--id', 'nope'], env)).code).toBe(3);
    expect(
      (await troupe(dir, ['bus', 'send', '--me', 'claude', '--to', 'codex,user', '--body', 'x'], env)).code,
    ).toBe(2);
    expect(
      (
        await troupe(
          dir,
          ['bus', 'send', '--me', 'claude', '--to', 'codex', '--kind', 'chat', '--body', 'x'],
          env,
        )
      ).code,
    ).toBe(2);
    expect((await troupe(dir, ['bus', 'drain'], env)).code).toBe(2); // no --me
    // a shell pinned to one session may not drain another root
    mkdirSync(join(dir, 'other'));
    await ok(dir, ['bus', 'init', '--root', join(dir, 'other'), '--agents', 'codex']);
    const pinned = { AM_ROOT: root, AM_SESSION: '' };
    expect(
      (await troupe(dir, ['bus', 'drain', '--me', 'codex', '--root', join(dir, 'other')], pinned)).code,
    ).toBe(5);
    expect(
      (await troupe(dir, ['bus', 'list', '--me', 'codex', '--root', join(dir, 'other')], pinned)).code,
    ).toBe(0);
    // inside a Git worktree with no eligible root
    const repo = join(dir, 'repo');
    mkdirSync(join(repo, '.git'), { recursive: true });
    const r = await troupe(repo, ['bus', 'list', '--me', 'codex'], { HOME: dir });
    expect(r.code).toBe(5);
  });
});
