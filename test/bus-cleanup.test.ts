import { existsSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type LiveProject, liveProject } from './support/live.js';
import { troupe } from './support/troupe.js';

// AMQ's `cleanup --wake-quarantine-older-than D` and `cleanup --launch-journal --root <session>`,
// as its README types them, through the built CLI (and `troupe amq cleanup`).

let project: LiveProject | undefined;
afterEach(() => project?.close());

const hoursAgo = (path: string, hours: number) => {
  const t = new Date(Date.now() - hours * 3600_000);
  utimesSync(path, t, t);
};

describe('cleanup --wake-quarantine-older-than', () => {
  it("removes AMQ's aged quarantined wake files and nothing else; --dry-run only lists them", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-cleanup-'));
    const root = join(dir, '.agent-mail');
    expect((await troupe(dir, ['bus', 'init', '--root', root, '--agents', 'claude,codex'])).code).toBe(0);
    const codex = join(root, 'agents', 'codex');
    const old = [
      join(codex, '.wake.lock.quarantined.20260101T000000Z'),
      join(root, 'agents', 'claude', '.wake.target.quarantined.1767225600'),
    ];
    const fresh = join(codex, '.wake.lock.quarantined.20261205T120000Z');
    const kept = [join(codex, '.wake.lock'), join(codex, '.wake.state'), join(codex, 'wake.quarantined.x')];
    for (const f of [...old, fresh, ...kept]) writeFileSync(f, '{}');
    for (const f of [...old, ...kept]) hoursAgo(f, 48);

    const dry = await troupe(dir, [
      'bus',
      'cleanup',
      '--root',
      root,
      '--wake-quarantine-older-than',
      '24h',
      '--dry-run',
      '--json',
    ]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({
      wake_quarantine: [...old].sort(),
      removed: false,
      dry_run: true,
    });
    expect(old.every((f) => existsSync(f))).toBe(true);

    // no --yes and no terminal: refused, nothing removed (AMQ asks)
    const unconfirmed = await troupe(dir, [
      'amq',
      'cleanup',
      '--root',
      root,
      '--wake-quarantine-older-than',
      '24h',
    ]);
    expect(unconfirmed.code).toBe(2);
    expect(old.every((f) => existsSync(f))).toBe(true);

    const r = await troupe(dir, [
      'amq',
      'cleanup',
      '--root',
      root,
      '--wake-quarantine-older-than',
      '24h',
      '--yes',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^removed 2 quarantined wake file\(s\)\n/);
    expect(old.some((f) => existsSync(f))).toBe(false);
    expect([fresh, ...kept].every((f) => existsSync(f))).toBe(true);

    const bad = await troupe(dir, ['bus', 'cleanup', '--root', root, '--wake-quarantine-older-than', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    const none = await troupe(dir, ['bus', 'cleanup', '--root', root, '--yes']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^troupe: nothing to clean/);
  }, 30_000);
});

describe('cleanup --launch-journal', () => {
  it("clears a session's journal that holds an apply at exit 6, so the next apply launches", async () => {
    project = await liveProject();
    const p = project;
    expect((await p.run(['bus', 'setup', '--agents', 'claude,codex', '--yes'])).code).toBe(0);
    const base = join(p.dir, '.agent-mail');
    const session = join(base, 'collab');
    const prep = await p.run(['launch', '--prepare', '--launcher', 'tmux', '--json']);
    expect(prep.code, prep.stderr).toBe(0);
    const prepared = JSON.parse(prep.stdout) as { digest: string; journal: string };
    // an apply killed while launching claude: it fails closed until the operator says
    writeFileSync(
      prepared.journal,
      `${JSON.stringify({ schema: 1, digest: prepared.digest, agents: { claude: 'launching', codex: 'pending' } })}\n`,
    );
    expect((await p.run(['launch', '--apply'])).code).toBe(6);

    const atBase = await p.run(['bus', 'cleanup', '--launch-journal', '--root', base, '--yes']);
    expect(atBase.code).toBe(2);
    expect(atBase.stderr).toMatch(/is a base root/);

    const dry = await p.run(['amq', 'cleanup', '--launch-journal', '--root', session, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toBe(`found the launch journal ${prepared.journal} (claude launching, codex pending)`);
    expect(existsSync(prepared.journal)).toBe(true);

    const r = await p.run(['amq', 'cleanup', '--launch-journal', '--root', session, '--yes', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      launch_journal: { path: prepared.journal, agents: { claude: 'launching', codex: 'pending' } },
      removed: true,
    });
    expect(existsSync(prepared.journal)).toBe(false);
    const again = await p.run(['bus', 'cleanup', '--launch-journal', '--root', session, '--yes']);
    expect(again.stdout).toBe(`no launch journal in ${session}`);

    const applied = await p.run(['launch', '--apply', '--json']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(
      (JSON.parse(applied.stdout) as { applied: Array<{ handle: string }> }).applied.map((a) => a.handle),
    ).toEqual(['claude', 'codex']);
  }, 60_000);
});
