import { existsSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openBus } from '../src/bus/bus.js';
import { type LiveProject, liveProject, until } from './support/live.js';

// AMQ's wake lifecycle, typed as an AMQ user would (`wake check | repair | recover-owner | retire`,
// `bus doctor --ops --fix-wake-locks`), against real tmux, the built CLI and the fake REPL CLIs.

let project: LiveProject | undefined;
afterEach(() => project?.close());

interface CheckV1 {
  wake_status: string;
  live_wake: boolean;
  wake_pid?: number;
  restart_capability: string;
  next_action: string;
}
interface CheckV2 {
  schema: number;
  wake: { status: string; live: boolean; pid: number | null; pane: string | null };
  restart_capability: string;
  action: { kind: string; actor: string; command: { program: string; args: string[] } | null };
}

describe('wake check, repair, recover-owner, retire', () => {
  it('a dead wake is found, repaired in its pane (announcing the mail that came meanwhile), retired, and its stale lock fixed', async () => {
    project = await liveProject();
    const p = project;
    expect((await p.run(['bus', 'setup', '--agents', 'claude', '--yes'])).code).toBe(0);
    const launched = JSON.parse((await p.run(['launch', '--json'])).stdout) as {
      root: string;
      agents: Array<{ pane: string }>;
    };
    const pane = launched.agents[0]!.pane;
    const wakeArgs = ['--me', 'claude', '--session', 'collab'];
    const check = async () => {
      const r = await p.run(['wake', 'check', ...wakeArgs, '--json']);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as CheckV1;
    };
    const live = await until('the wake', async () => {
      const c = await check();
      return c.live_wake ? c : undefined;
    });
    expect(live).toMatchObject({ wake_status: 'valid', restart_capability: 'operator_only' });

    // --json-schema needs --json (AMQ: usage, exit 2)
    expect((await p.run(['wake', 'check', ...wakeArgs, '--json-schema', '2'])).code).toBe(2);

    process.kill(live.wake_pid!, 'SIGKILL');
    const dead = await until('the dead wake seen', async () => {
      const r = await p.run(['wake', 'check', ...wakeArgs, '--json', '--json-schema=2']);
      const c = JSON.parse(r.stdout) as CheckV2;
      return c.wake.status === 'stale' ? c : undefined;
    });
    expect(dead).toMatchObject({
      schema: 2,
      wake: { live: false, pane },
      restart_capability: 'agent_safe',
      action: { kind: 'repair', actor: 'agent' },
    });
    expect(isAbsolute(dead.action.command!.program)).toBe(true);
    expect(dead.action.command!.args.slice(-5)).toEqual([
      'repair',
      '--me',
      'claude',
      '--root',
      launched.root,
    ]);
    // the whole doctor in AMQ's schema 2: every lock carries wake check's own envelope
    const doctor2 = await p.run(['amq', 'doctor', '--ops', '--json', '--json-schema=2']);
    expect(doctor2.code, doctor2.stderr).toBe(0);
    const d2 = JSON.parse(doctor2.stdout) as {
      ops: { root: { path: string; source: string }; wake_locks: Array<Record<string, unknown>> };
    };
    expect(Object.keys(d2)).toEqual(['schema', 'checks', 'mailboxes', 'summary', 'ops']);
    expect(Object.keys(d2.ops)).toEqual(['root', 'agents', 'operator_gate', 'wake_locks', 'hints']);
    expect(d2.ops.root).toEqual({ path: join(p.dir, '.agent-mail'), source: 'amqrc' });
    expect(d2.ops.wake_locks).toHaveLength(1);
    expect(d2.ops.wake_locks[0]).toMatchObject({
      agent: 'claude',
      session: 'collab',
      root: launched.root,
      status: 'stale',
      pane,
    });
    expect(d2.ops.wake_locks[0]!.wake_check).toEqual(dead);
    const text = await p.run(['wake', 'check', ...wakeArgs]);
    expect(text.stdout).toMatch(
      /: stale \(pid \d+, pane %\d+\)\nrestart_capability: agent_safe\nnext: .*wake repair --me claude --root /,
    );

    // mail while no wake runs: the repaired wake announces it
    const session = openBus(launched.root, {
      baseRoot: dirname(launched.root),
      session: basename(launched.root),
    });
    session.send({ from: 'user', to: ['claude'], subject: 'while the wake was dead', body: 'x' });
    const repaired = await p.run(['wake', 'repair', ...wakeArgs]);
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(repaired.stdout).toMatch(new RegExp(`wake for claude repaired: pid \\d+ in pane ${pane}`));
    await until('the notice of the mail that came meanwhile', () =>
      p.tmux(['capture-pane', '-p', '-J', '-t', pane]).includes('"while the wake was dead"'),
    );
    const again = await check();
    expect(again.live_wake).toBe(true);
    expect(again.wake_pid).not.toBe(live.wake_pid);
    // repairing a live wake is a no-op
    expect((await p.run(['wake', 'repair', ...wakeArgs])).stdout).toMatch(/nothing to repair/);

    // retire: refused unless the identity and the expected pane match; then the wake stops
    const wrongPane = await p.run(['wake', 'retire', ...wakeArgs, '--pane', '%999']);
    expect(wrongPane.code).toBe(6);
    expect(wrongPane.stderr).toMatch(/refused \(target_mismatch\)/);
    expect((await check()).live_wake).toBe(true);
    const retired = await p.run(['wake', 'retire', ...wakeArgs, '--pane', pane, '--json']);
    expect(retired.code, retired.stderr).toBe(0);
    expect(JSON.parse(retired.stdout)).toMatchObject({ result: 'retired', pid: again.wake_pid });
    expect(() => process.kill(again.wake_pid!, 0)).toThrow();
    expect((await check()).wake_status).toBe('missing');
    // nothing to repair without a lock: the operator starts one (exit 6)
    expect((await p.run(['wake', 'repair', ...wakeArgs])).code).toBe(6);

    // a wake whose pane is gone too: check points at doctor --fix-wake-locks, which removes the lock
    expect(
      (await p.run(['wake', '--me', 'claude', '--root', launched.root, '--pane', pane, '--detach'])).code,
    ).toBe(0);
    const third = await until('a third wake', async () => {
      const c = await check();
      return c.live_wake ? c : undefined;
    });
    process.kill(third.wake_pid!, 'SIGKILL');
    p.tmux(['kill-server']);
    const orphan = await until('the orphan lock', async () => {
      const c = await check();
      return c.wake_status === 'stale' ? c : undefined;
    });
    expect(orphan.next_action).toMatch(/bus doctor --ops --fix-wake-locks --root /);
    const fixed = await p.run(['bus', 'doctor', '--ops', '--fix-wake-locks', '--json']);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(
      (JSON.parse(fixed.stdout) as { ops: { fixed_wake_locks: string[] } }).ops.fixed_wake_locks,
    ).toEqual(['collab/claude']);
    expect(existsSync(join(launched.root, 'agents', 'claude', 'extensions', 'troupe', 'wake.lock'))).toBe(
      false,
    );
    expect((await check()).wake_status).toBe('missing');
  }, 90_000);

  it('recover-owner releases a live wake only from its own pane, and a dead owner outright', async () => {
    project = await liveProject();
    const p = project;
    expect((await p.run(['bus', 'setup', '--agents', 'claude', '--yes'])).code).toBe(0);
    const launched = JSON.parse((await p.run(['launch', '--json'])).stdout) as {
      root: string;
      agents: Array<{ pane: string }>;
    };
    const pane = launched.agents[0]!.pane;
    const args = ['wake', 'recover-owner', '--me', 'claude', '--root', launched.root];
    const lockPid = async () => {
      const r = await p.run(['wake', 'check', '--me', 'claude', '--root', launched.root, '--json']);
      const c = JSON.parse(r.stdout) as CheckV1;
      return c.live_wake ? c.wake_pid : undefined;
    };
    const pid = await until('the wake', lockPid);

    const elsewhere = await p.run(args, { TMUX_PANE: '%4242' });
    expect(elsewhere.code).toBe(6);
    expect(elsewhere.stderr).toMatch(/refused \(not_owner\)/);
    expect(() => process.kill(pid, 0)).not.toThrow();

    const own = await p.run(args, { TMUX_PANE: pane });
    expect(own.code, own.stderr).toBe(0);
    expect(own.stdout).toMatch(/: released/);
    expect(() => process.kill(pid, 0)).toThrow();

    // a dead owner's lock needs no pane
    expect((await p.run(['wake', 'repair', '--me', 'claude', '--root', launched.root])).code).toBe(6);
    expect(
      (await p.run(['wake', '--me', 'claude', '--root', launched.root, '--pane', pane, '--detach'])).code,
    ).toBe(0);
    const next = await until('a new wake', lockPid);
    process.kill(next, 'SIGKILL');
    await until('it is dead', async () => (await lockPid()) === undefined);
    const dead = await p.run([...args, '--json']);
    expect(dead.code, dead.stderr).toBe(0);
    expect(JSON.parse(dead.stdout)).toMatchObject({ result: 'released', pid: next });
    expect((await p.run([...args])).stdout).toMatch(/nothing to release/);
  }, 90_000);
});
