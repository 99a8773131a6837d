import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { type LiveProject, liveProject, until } from './support/live.js';
import { bin } from './support/troupe.js';

// `troupe launch --plan | --prepare | --apply` through the CLI, on a private tmux server with
// the fake agent CLIs (test/support/live.ts).

interface Prepared {
  digest: string;
  plan: {
    session: string;
    root: string;
    launcher: string;
    agents: Array<{ handle: string; action: string }>;
  };
  prepared?: string;
  journal?: string;
}

interface Applied {
  digest: string;
  applied: Array<{ handle: string; disposition: string; pane?: string }>;
  already: string[];
  journal: string;
}

let project: LiveProject | undefined;
afterEach(() => project?.close());

async function setUp(): Promise<LiveProject> {
  project = await liveProject();
  const setup = await project.run(['bus', 'setup', '--agents', 'claude,codex', '--yes']);
  expect(setup.code, setup.stderr).toBe(0);
  return project;
}

const journalOf = (file: string) =>
  JSON.parse(readFileSync(file, 'utf8')) as { digest: string; agents: Record<string, string> };
const started = (p: LiveProject) =>
  p
    .events()
    .filter((e) => e.event === 'start')
    .map((e) => e.cli);
const panes = (p: LiveProject) => {
  try {
    return p.tmux(['list-panes', '-a', '-F', '#{pane_id}']).trim().split('\n').filter(Boolean).length;
  } catch {
    return 0; // no server: nothing was launched
  }
};

describe('troupe launch --plan / --prepare / --apply', () => {
  it('plans without writing, refuses a changed plan with exit 6, applies once, and a second apply launches nothing', async () => {
    const p = await setUp();
    const record = join(p.dir, '.agent-mail', 'collab', 'extensions', 'troupe');

    const planned = await p.run(['launch', '--plan', '--launcher', 'tmux', '--json']);
    expect(planned.code, planned.stderr).toBe(0);
    const plan = JSON.parse(planned.stdout) as Prepared;
    expect(plan.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(plan.plan.agents.map((a) => `${a.handle}:${a.action}`)).toEqual(['claude:launch', 'codex:launch']);
    expect(plan.prepared).toBeUndefined();
    expect(panes(p)).toBe(0);

    const prep = await p.run(['launch', '--prepare', '--launcher', 'tmux', '--json']);
    expect(prep.code, prep.stderr).toBe(0);
    const prepared = JSON.parse(prep.stdout) as Prepared;
    expect(prepared.digest).toBe(plan.digest);
    expect(prepared.prepared).toBe(join(record, 'launch-prepared.json'));
    expect(journalOf(prepared.journal!)).toEqual({
      schema: 1,
      digest: plan.digest,
      agents: { claude: 'pending', codex: 'pending' },
    });

    // the roster changes after the preparation: the apply is refused and starts nothing
    const launchFile = join(p.dir, '.amq', 'launch.json');
    const original = readFileSync(launchFile, 'utf8');
    writeFileSync(launchFile, original.replace('"codex"\n', '"codex",\n        "--model",\n        "o3"\n'));
    expect(readFileSync(launchFile, 'utf8')).not.toBe(original);
    const stale = await p.run(['launch', '--apply']);
    expect(stale.code).toBe(6);
    expect(stale.stderr).toMatch(/^troupe: the launch plan changed since it was prepared/);
    expect(stale.stderr).not.toMatch(/\n\s+at /);
    expect(panes(p)).toBe(0);
    expect(started(p)).toEqual([]);

    writeFileSync(launchFile, original);
    const applied = await p.run(['launch', '--apply', '--json']);
    expect(applied.code, applied.stderr).toBe(0);
    const result = JSON.parse(applied.stdout) as Applied;
    expect(result.applied.map((a) => `${a.handle}:${a.disposition}`)).toEqual([
      'claude:started',
      'codex:started',
    ]);
    expect(result.already).toEqual([]);
    expect(journalOf(result.journal).agents).toEqual({ claude: 'launched', codex: 'launched' });
    expect(panes(p)).toBe(2);

    const again = await p.run(['launch', '--apply', '--json']);
    expect(again.code, again.stderr).toBe(0);
    const second = JSON.parse(again.stdout) as Applied;
    expect(second.applied).toEqual([]);
    expect(second.already).toEqual(['claude', 'codex']);
    expect(panes(p)).toBe(2);
  }, 60_000);

  it('after a crash between two agents, a second apply launches only the agent not yet launched', async () => {
    const p = await setUp();
    const prep = await p.run(['launch', '--prepare', '--launcher', 'tmux', '--json']);
    expect(prep.code, prep.stderr).toBe(0);
    const prepared = JSON.parse(prep.stdout) as Prepared;
    // what an apply killed right after claude's launch leaves: claude launched, codex still pending
    const first = await p.run(['launch', '--apply', '--json']);
    expect(first.code, first.stderr).toBe(0);
    writeFileSync(
      prepared.journal!,
      `${JSON.stringify({ schema: 1, digest: prepared.digest, agents: { claude: 'launched', codex: 'pending' } })}\n`,
    );
    // the CLIs start in their panes after apply returns: wait for claude's before counting
    await until('claude started', () => started(p).includes('claude'));
    p.tmux(['kill-pane', '-t', (JSON.parse(first.stdout) as Applied).applied[1]!.pane!]);
    const before = started(p);
    expect(before.filter((c) => c === 'claude')).toHaveLength(1);

    const resumed = await p.run(['launch', '--apply', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const result = JSON.parse(resumed.stdout) as Applied;
    expect(result.already).toEqual(['claude']);
    expect(result.applied.map((a) => a.handle)).toEqual(['codex']);
    expect(journalOf(result.journal).agents).toEqual({ claude: 'launched', codex: 'launched' });
    // claude was not started a second time
    expect(started(p).filter((c) => c === 'claude')).toHaveLength(1);
  }, 60_000);
});

describe('troupe launch on a terminal: the trust prompt', () => {
  const hasScript = existsSync('/usr/bin/script');

  it.skipIf(!hasScript)(
    'asks once per plan: no launches nothing (exit 6), yes launches and is kept outside the worktree; a changed plan asks again',
    async () => {
      const p = await setUp();
      const config = join(p.dir, '..', 'config');
      const env = { ...p.env, XDG_CONFIG_HOME: config, NO_COLOR: '1' };
      // util-linux `script` gives the command a terminal and types the answer into it
      const onTerminal = (answer: string) =>
        execa('script', ['-qec', `node ${bin} launch --launcher tmux`, '/dev/null'], {
          cwd: p.dir,
          env,
          input: answer,
          reject: false,
        });
      const no = await onTerminal('n\n');
      expect(String(no.stdout)).toMatch(/launch plan sha256:[0-9a-f]{64}\r?\n/);
      expect(String(no.stdout)).toMatch(
        /launch this plan \(sha256:[0-9a-f]{64}\) and trust it for .*\? \[y\/N\]/,
      );
      expect(String(no.stdout)).toContain('launch plan not trusted: nothing launched');
      expect(no.exitCode).toBe(6);
      expect(panes(p)).toBe(0);
      expect(existsSync(join(config, 'troupe', 'launch-trust.json'))).toBe(false);

      const yes = await onTerminal('y\n');
      expect(yes.exitCode, String(yes.stdout)).toBe(0);
      expect(panes(p)).toBe(2);
      const trusted = JSON.parse(readFileSync(join(config, 'troupe', 'launch-trust.json'), 'utf8'));
      expect(Object.values(trusted)[0]).toMatch(/^sha256:/);
      expect(existsSync(join(p.dir, '.amq', 'launch-trust.json'))).toBe(false);

      // trusted: launches again without asking (an empty answer would be a no)
      const again = await onTerminal('');
      expect(again.exitCode, String(again.stdout)).toBe(0);
      expect(String(again.stdout)).not.toMatch(/\[y\/N\]/);

      // another plan (the launcher is part of it): asked again
      const other = await execa('script', ['-qec', `node ${bin} launch --launcher commands`, '/dev/null'], {
        cwd: p.dir,
        env,
        input: 'n\n',
        reject: false,
      });
      expect(String(other.stdout)).toMatch(/\[y\/N\]/);
      expect(other.exitCode).toBe(6);

      // not on a terminal: never asked, as before
      const script = await p.run(['launch', '--launcher', 'commands', '--json'], { XDG_CONFIG_HOME: config });
      expect(script.code).toBe(6);
      expect(script.stderr).toBe('');
    },
    90_000,
  );
});
