import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadAmqrc } from '../src/bus/amqrc.js';
import { mailbox, missingLeaves, readConfig } from '../src/bus/layout.js';
import { readLaunchConfig } from '../src/live/launch-config.js';
import { type LiveProject, liveProject } from './support/live.js';

/** Every path under dir with its size and mtime, so "wrote nothing" can be checked. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        out.push(`${relative(dir, p)}/`);
        if (e.name !== '.git') walk(p);
      } else out.push(`${relative(dir, p)} ${statSync(p).size} ${statSync(p).mtimeMs}`);
    }
  };
  walk(dir);
  return out.sort();
}

interface PlanJson {
  digest: string;
  plan: {
    roster: Array<{ handle: string; kind: string; adapter?: string }>;
    default_session: string;
    launcher_preference: string[];
    notes: string[];
    files: Array<{ path: string; action: string }>;
    mailboxes: string[];
  };
}

let project: LiveProject | undefined;
afterEach(() => project?.close());

describe('troupe bus setup', () => {
  it('previews without writing, refuses a stale digest with exit 6, and writes AMQ files that read back', async () => {
    project = await liveProject();
    const p = project;
    const before = snapshot(p.dir);
    const preview = await p.run(['bus', 'setup', '--preview', '--json']);
    expect(preview.code, preview.stderr).toBe(0);
    const { digest, plan } = (JSON.parse(preview.stdout) as { preview: PlanJson }).preview;
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    // one handle per CLI found on PATH (the fakes), plus the person
    expect(plan.roster.map((r) => `${r.handle}:${r.kind}`)).toEqual([
      'claude:agent',
      'gemini:agent',
      'codex:agent',
      'user:human',
    ]);
    expect(plan.default_session).toBe('collab');
    expect(snapshot(p.dir)).toEqual(before);

    // the plan changes under the preview: a roster of one, then the old digest is refused
    const stale = await p.run(['bus', 'setup', '--apply', digest, '--agents', 'claude']);
    expect(stale.code).toBe(6);
    expect(stale.stderr).toMatch(/plan changed since its preview/);
    expect(stale.stderr).not.toMatch(/\n\s+at /);
    expect(snapshot(p.dir)).toEqual(before);

    const applied = await p.run(['bus', 'setup', '--apply', digest, '--json']);
    expect(applied.code, applied.stderr).toBe(0);
    expect((JSON.parse(applied.stdout) as { applied: PlanJson }).applied.digest).toBe(digest);

    // what AMQ reads: .amqrc, meta/config.json, a complete mailbox per handle in the base and the session
    const rc = loadAmqrc(join(p.dir, '.amqrc'));
    expect(rc.root).toBe(join(p.dir, '.agent-mail'));
    expect(readFileSync(join(p.dir, '.amqrc'), 'utf8')).toBe('{\n  "root": ".agent-mail"\n}\n');
    const config = readConfig(rc.root);
    expect(config?.agents).toEqual(['claude', 'codex', 'gemini']);
    // byte for byte AMQ's layout (test/fixtures/amq/config.json), once the creation time is the fixture's
    const fixture = readFileSync(join(__dirname, 'fixtures', 'amq', 'config.json'), 'utf8');
    const written = readFileSync(join(rc.root, 'meta', 'config.json'), 'utf8');
    expect(written.replace(/"created_utc": "[^"]+"/, '"created_utc": "2026-08-22T11:00:00Z"')).toBe(
      fixture.replace('"codex"', '"codex",\n    "gemini"'),
    );
    for (const root of [rc.root, join(rc.root, 'collab')]) {
      for (const h of ['claude', 'codex', 'gemini', 'user'])
        expect(missingLeaves(mailbox(root, h))).toEqual([]);
    }
    const launch = readLaunchConfig(p.dir);
    expect(launch).toEqual({
      schema: 1,
      default_session: 'collab',
      agents: ['claude', 'gemini', 'codex'].map((h) => ({
        handle: h,
        adapter: h,
        command: [h],
        resume_policy: 'resume',
      })),
      layout: { type: 'columns' },
    });
    // AMQ's key order (README's example)
    expect(Object.keys(JSON.parse(readFileSync(join(p.dir, '.amq', 'launch.json'), 'utf8')))).toEqual([
      'schema',
      'default_session',
      'agents',
      'layout',
    ]);
    expect(readFileSync(join(p.dir, '.gitignore'), 'utf8')).toContain('.agent-mail/\n');

    // the bus works on what setup wrote: a send into the session, from another process
    const sent = await p.run(['bus', 'send', '--me', 'user', '--to', 'codex', '--body', 'hi', '--json'], {
      AM_ROOT: join(rc.root, 'collab'),
    });
    expect(sent.code, sent.stderr).toBe(0);
    const doctor = JSON.parse((await p.run(['bus', 'doctor', '--json'])).stdout) as {
      summary: { error: number };
    };
    expect(doctor.summary.error).toBe(0);

    // setup again: nothing left to do
    const again = JSON.parse((await p.run(['bus', 'setup', '--preview', '--json'])).stdout) as {
      preview: PlanJson;
    };
    expect(again.preview.plan.files.map((f) => f.action)).toEqual(['keep', 'keep', 'keep', 'keep']);
    expect(again.preview.plan.mailboxes).toEqual([]);
  });

  it('takes the roster from --agents (handle:cli) and rejects a bad one with exit 2', async () => {
    project = await liveProject();
    const good = await project.run([
      'bus',
      'setup',
      '--agents',
      'claude,reviewer:codex',
      '--session',
      'pair',
      '--yes',
      '--json',
    ]);
    expect(good.code, good.stderr).toBe(0);
    expect(readLaunchConfig(project.dir)?.agents.map((a) => `${a.handle}:${a.adapter}`)).toEqual([
      'claude:claude',
      'reviewer:codex',
    ]);
    const bad = await project.run(['bus', 'setup', '--agents', 'claude,vim', '--preview']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/'vim' names no agent CLI/);
  });

  it("AMQ's non-interactive setup: --default-session and --launcher-preference, previewed then applied", async () => {
    project = await liveProject();
    const p = project;
    // the seed's own lines (amq-readme: setup_args, preview, apply of its digest)
    const args = [
      '--agents',
      'claude,codex',
      '--default-session',
      'review',
      '--launcher-preference',
      'commands',
    ];
    const before = snapshot(p.dir);
    const preview = await p.run(['bus', 'setup', '--preview', '--json', ...args]);
    expect(preview.code, preview.stderr).toBe(0);
    const { digest, plan } = (JSON.parse(preview.stdout) as { preview: PlanJson }).preview;
    expect(plan.default_session).toBe('review');
    expect(plan.launcher_preference).toEqual(['commands']);
    expect(snapshot(p.dir)).toEqual(before);
    const applied = await p.run(['bus', 'setup', '--apply', digest, ...args]);
    expect(applied.code, applied.stderr).toBe(0);

    expect(readLaunchConfig(p.dir)?.default_session).toBe('review');
    expect(existsSync(join(p.dir, '.agent-mail', 'review', 'agents', 'codex'))).toBe(true);
    // AMQ's local preferences: its file, its bytes, its owner's only, and out of commits
    const local = join(p.dir, '.amq', 'launch.local.json');
    expect(readFileSync(local, 'utf8')).toBe(
      '{\n  "schema": 1,\n  "launcher_preference": [\n    "commands"\n  ]\n}\n',
    );
    expect(statSync(local).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(p.dir, '.gitignore'), 'utf8')).toContain('.amq/launch.local.json\n');

    // launch --launcher auto follows the preference: the commands, although tmux is here
    const launched = await p.run(['launch', '--json']);
    expect(launched.code, launched.stderr).toBe(6);
    expect(JSON.parse(launched.stdout)).toMatchObject({ launcher: 'commands', session: 'review' });
  });

  it("keeps AMQ's cmux in the preference, and refuses a launcher nobody knows", async () => {
    project = await liveProject();
    const p = project;
    const before = snapshot(p.dir);
    const unknown = await p.run([
      'bus',
      'setup',
      '--agents',
      'claude',
      '--launcher-preference',
      'screen',
      '--yes',
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unsupported launcher 'screen'/);
    const disagree = await p.run(['bus', 'setup', '--default-session', 'a', '--session', 'b', '--preview']);
    expect(disagree.code).toBe(2);
    expect(snapshot(p.dir)).toEqual(before);

    const kept = await p.run([
      'bus',
      'setup',
      '--agents',
      'claude',
      '--launcher-preference',
      'cmux,tmux',
      '--yes',
    ]);
    expect(kept.code, kept.stderr).toBe(0);
    // troupe launches with cmux too (docs/live.md): nothing is skipped, so no warning
    expect(kept.stderr).not.toMatch(/skipped by troupe launch/);
    const local = JSON.parse(readFileSync(join(p.dir, '.amq', 'launch.local.json'), 'utf8'));
    expect(local).toEqual({ schema: 1, launcher_preference: ['cmux', 'tmux', 'commands'] });
    // setup again without the flag keeps this machine's preference
    const again = JSON.parse((await p.run(['bus', 'setup', '--preview', '--json'])).stdout) as {
      preview: PlanJson;
    };
    expect(again.preview.plan.launcher_preference).toEqual(['cmux', 'tmux', 'commands']);
  });
});
