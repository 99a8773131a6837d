import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { openBus } from '../src/bus/bus.js';
import { type LiveProject, liveProject, until } from './support/live.js';
import { repoRoot, troupe } from './support/troupe.js';

// Real tmux (a private server per test), the real CLI binary, and fake interactive CLIs that
// echo what is typed into them. Waits poll with deadlines; nothing asserts how fast anything is.

interface Launched {
  session: string;
  root: string;
  launcher: string;
  attach?: string;
  agents: Array<{
    handle: string;
    disposition: string;
    conversation_id: string | null;
    pane?: string;
    argv: string[];
    command?: string;
  }>;
}

interface Ops {
  ops: {
    agents: Array<{
      handle: string;
      session?: string;
      unread_count: number;
      wake?: { pid: number; state: string };
    }>;
    hints: Array<{ code: string; detail: string }>;
    wakes: { running: number; stale: number };
  };
}

let project: LiveProject | undefined;
afterEach(() => project?.close());

async function setUp(agents: string, extraEnv: Record<string, string> = {}): Promise<LiveProject> {
  project = await liveProject(extraEnv);
  const setup = await project.run(['bus', 'setup', '--agents', agents, '--yes']);
  expect(setup.code, setup.stderr).toBe(0);
  return project;
}

async function launch(p: LiveProject, args: string[] = []): Promise<Launched> {
  const r = await p.run(['launch', ...args, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Launched;
}

async function ops(p: LiveProject): Promise<Ops['ops']> {
  const r = await p.run(['bus', 'doctor', '--ops', '--json']);
  return (JSON.parse(r.stdout) as Ops).ops;
}

function wakeOf(o: Ops['ops'], handle: string) {
  return o.agents.find((a) => a.session === 'collab' && a.handle === handle)?.wake;
}

/** Notices the fake CLI was given (each one a line typed into it, Enter included). */
function notices(p: LiveProject, cli: string): string[] {
  return p
    .events()
    .filter((e) => e.cli === cli && e.event === 'input' && e.line?.startsWith('troupe:'))
    .map((e) => e.line!);
}

/** A session's bus, as a process with AM_ROOT set to it opens it (the base root's roster applies). */
const busOf = (root: string) => openBus(root, { baseRoot: dirname(root), session: basename(root) });

const send = (root: string, to: string, subject: string, priority?: 'urgent') =>
  busOf(root).send({
    from: 'user',
    to: [to],
    subject,
    body: `about ${subject}`,
    ...(priority ? { priority } : {}),
  });

describe('troupe launch and wake, in tmux', () => {
  it('mail puts exactly one notice in the agent pane, naming sender, subject and command; urgent says so', async () => {
    const p = await setUp('claude', { FAKE_LIVE_DRAIN: '1' });
    const launched = await launch(p);
    const pane = launched.agents[0]!.pane!;
    await until('the wake', async () => wakeOf(await ops(p), 'claude')?.state === 'running');
    await until('the fake claude', () =>
      p.tmux(['capture-pane', '-p', '-t', pane]).includes('fake claude ready'),
    );

    send(launched.root, 'claude', 'Review x.ts');
    const screen = await until('the notice in the pane', () => {
      const text = p.tmux(['capture-pane', '-p', '-J', '-t', pane]);
      return text.includes('troupe: mail for claude from user: "Review x.ts"') ? text : '';
    });
    expect(screen).toMatch(/read with: .*bus drain --me claude --include-body/);
    // the fake agent ran the command it was given: the mail is read, so the doorbell stops
    await until('the mail read', () => busOf(launched.root).list('claude').items.length === 0);
    const readAt = Date.now();
    await until('past the first doorbell retry (5 s)', () => Date.now() - readAt > 6500, 10_000);
    expect(notices(p, 'claude')).toHaveLength(1);

    send(launched.root, 'claude', 'Production is down', 'urgent');
    await until('the urgent notice', () =>
      notices(p, 'claude').some((n) =>
        n.startsWith('troupe: URGENT mail for claude from user: "Production is down"'),
      ),
    );
    expect(notices(p, 'claude')).toHaveLength(2);
  }, 60_000);

  it('50 messages in 5 s to a busy agent give at most a few notices', async () => {
    const p = await setUp('claude');
    const launched = await launch(p);
    await until('the wake', async () => wakeOf(await ops(p), 'claude')?.state === 'running');
    for (let i = 0; i < 50; i++) {
      send(launched.root, 'claude', `burst ${i}`);
      await sleep(100);
    }
    await until('a notice', () => notices(p, 'claude').length > 0);
    await sleep(1500);
    const got = notices(p, 'claude');
    expect(got.length).toBeGreaterThanOrEqual(1);
    expect(got.length).toBeLessThanOrEqual(3);
    expect(got.at(-1)).toMatch(
      /troupe: \d+ new messages for claude \(\d+ from user\)|troupe: mail for claude/,
    );
    expect(
      (await ops(p)).agents.find((a) => a.session === 'collab' && a.handle === 'claude')?.unread_count,
    ).toBe(50);
  }, 60_000);

  it('a killed wake leaves a stale lock that doctor reports and the next wake takes over', async () => {
    const p = await setUp('claude');
    const launched = await launch(p);
    const pane = launched.agents[0]!.pane!;
    const first = await until('the wake', async () => {
      const w = wakeOf(await ops(p), 'claude');
      return w?.state === 'running' ? w : undefined;
    });
    process.kill(first.pid, 'SIGKILL');
    const stale = await until('the stale lock', async () => {
      const o = await ops(p);
      return wakeOf(o, 'claude')?.state === 'stale' ? o : undefined;
    });
    expect(stale.wakes).toEqual({ running: 0, stale: 1 });
    expect(stale.hints.map((h) => h.code)).toContain('stale_wake_lock');

    const started = await p.run([
      'wake',
      '--me',
      'claude',
      '--root',
      launched.root,
      '--pane',
      pane,
      '--detach',
    ]);
    expect(started.code, started.stderr).toBe(0);
    const second = await until('the new wake', async () => {
      const w = wakeOf(await ops(p), 'claude');
      return w?.state === 'running' ? w : undefined;
    });
    expect(second.pid).not.toBe(first.pid);
    const who = JSON.parse((await p.run(['bus', 'who', '--json'])).stdout) as Array<{
      session: string;
      handle: string;
      presence_source?: string;
    }>;
    expect(who.find((w) => w.session === 'collab' && w.handle === 'claude')?.presence_source).toBe(
      'notifier_live',
    );
    // one wake per agent: another one, in the foreground, leaves at once
    const third = await p.run(['wake', '--me', 'claude', '--root', launched.root, '--pane', pane]);
    expect(third.code).toBe(0);
    expect(third.stderr).toMatch(new RegExp(`a wake for claude already runs \\(pid ${second.pid}\\)`));

    send(launched.root, 'claude', 'still there?');
    await until('the notice from the new wake', () => notices(p, 'claude').length === 1);
  }, 60_000);

  it('launch and session resume give an agent whose pane lives a new wake when its wake died, which announces the mail that came meanwhile', async () => {
    const p = await setUp('claude');
    const launched = await launch(p);
    const running = async () => {
      const w = wakeOf(await ops(p), 'claude');
      return w?.state === 'running' ? w : undefined;
    };
    const first = await until('the wake', running);
    process.kill(first.pid, 'SIGKILL');
    await until('the stale lock', async () => wakeOf(await ops(p), 'claude')?.state === 'stale');
    // mail no wake announced: the agent must hear of it once a wake runs again
    send(launched.root, 'claude', 'while no wake ran');

    const again = await launch(p);
    expect(again.agents.map((a) => `${a.handle}:${a.disposition}:${a.pane}`)).toEqual([
      `claude:running:${launched.agents[0]!.pane}`,
    ]);
    const second = await until('a new wake', async () => {
      const w = await running();
      return w && w.pid !== first.pid ? w : undefined;
    });
    await until('the notice of the mail that came meanwhile', () =>
      notices(p, 'claude').some((n) => n.includes('while no wake ran')),
    );

    // the same from `session resume`, the agent having read its mail
    const drained = await p.run(['bus', 'drain', '--me', 'claude', '--root', launched.root]);
    expect(drained.code, drained.stderr).toBe(0);
    process.kill(second.pid, 'SIGKILL');
    await until('the stale lock again', async () => wakeOf(await ops(p), 'claude')?.state === 'stale');
    const resumed = await p.run(['session', 'resume', 'collab', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    await until('a third wake', async () => {
      const w = await running();
      return w && w.pid !== second.pid ? w : undefined;
    });
    send(launched.root, 'claude', 'after the resume');
    await until('its notice', () => notices(p, 'claude').some((n) => n.includes('after the resume')));
  }, 90_000);

  it('launch after a crash resumes each recorded conversation id, never "last"', async () => {
    const p = await setUp('claude,codex,gemini');
    const first = await launch(p);
    expect(first.agents.map((a) => a.disposition)).toEqual(['started', 'started', 'started']);
    const claudeId = first.agents.find((a) => a.handle === 'claude')!.conversation_id!;
    const geminiId = first.agents.find((a) => a.handle === 'gemini')!.conversation_id!;
    const starts = () => p.events().filter((e) => e.event === 'start');
    await until('three CLIs up', () => starts().length === 3);
    const codexId = starts().find((e) => e.cli === 'codex')!.conversation!;
    expect(starts().find((e) => e.cli === 'claude')!.argv).toEqual(
      expect.arrayContaining(['--session-id', claudeId, '--append-system-prompt']),
    );
    // the standing instruction: the commands to check, read, reply and send
    const instruction = starts()
      .find((e) => e.cli === 'codex')!
      .argv!.at(-1)!;
    for (const verb of ['drain --me codex', 'list --me codex', 'reply --me codex', 'send --me codex'])
      expect(instruction).toContain(verb);

    // relaunch while they run: nothing is started twice
    const again = await launch(p);
    expect(again.agents.map((a) => a.disposition)).toEqual(['running', 'running', 'running']);

    p.tmux(['kill-server']);
    const relaunched = await launch(p);
    expect(relaunched.agents.map((a) => `${a.handle}:${a.disposition}:${a.conversation_id}`)).toEqual([
      `claude:resumed:${claudeId}`,
      `codex:resumed:${codexId}`,
      `gemini:resumed:${geminiId}`,
    ]);
    await until('three CLIs up again', () => starts().length === 6);
    const argv = (cli: string) =>
      starts()
        .filter((e) => e.cli === cli)
        .at(-1)!.argv!;
    expect(argv('claude').slice(0, 2)).toEqual(['--resume', claudeId]);
    expect(argv('codex')).toEqual(['resume', codexId]);
    expect(argv('gemini')).toEqual(['--resume', geminiId]);
    for (const cli of ['claude', 'codex', 'gemini'])
      expect(argv(cli).filter((a) => ['--continue', '-c', '--last', 'latest'].includes(a))).toEqual([]);
    const record = JSON.parse(
      readFileSync(join(relaunched.root, 'extensions', 'troupe', 'session.json'), 'utf8'),
    ) as { agents: Record<string, { conversation_id: string; launches: number }> };
    expect(record.agents.codex).toMatchObject({ conversation_id: codexId, launches: 2 });

    const listed = JSON.parse((await p.run(['session', 'list', '--json'])).stdout) as Array<{
      session: string;
      agents: Array<{ handle: string; conversation_id: string }>;
    }>;
    expect(
      listed
        .find((s) => s.session === 'collab')
        ?.agents.map((a) => a.conversation_id)
        .sort(),
    ).toEqual([claudeId, codexId, geminiId].sort());
  }, 90_000);

  it('prints commands that work pasted anywhere when launched from a subdirectory of the project', async () => {
    const p = await setUp('claude');
    // a project near this clone, so the way to bin/troupe.js from its subdirectory is shorter
    // relative than absolute: the path that once went into the commands, and broke after their `cd`
    const cache = join(repoRoot, 'node_modules', '.cache');
    mkdirSync(cache, { recursive: true });
    const near = mkdtempSync(join(cache, 'p-'));
    try {
      execFileSync('git', ['init', '--quiet', near]);
      mkdirSync(join(near, 'src', 'deep'), { recursive: true });
      const setup = await troupe(near, ['bus', 'setup', '--agents', 'claude', '--yes'], p.env);
      expect(setup.code, setup.stderr).toBe(0);
      const r = await troupe(
        join(near, 'src', 'deep'),
        ['launch', '--launcher', 'commands', '--json'],
        p.env,
      );
      expect(r.code, r.stderr).toBe(6);
      const line = (JSON.parse(r.stdout) as Launched).agents[0]!.command!;
      const run = /&& node (\S+) wake --me claude/.exec(line);
      expect(run, line).not.toBeNull();
      expect(isAbsolute(run![1]!), line).toBe(true);
      expect(existsSync(run![1]!)).toBe(true);
      // and the line, pasted in another directory, starts the wake (the fake CLI stands in for claude)
      // (outside tmux the wake says so and steps aside), then starts the agent's CLI
      execFileSync('sh', ['-c', line], {
        cwd: tmpdir(),
        env: { ...process.env, ...p.env },
        stdio: 'ignore',
        timeout: 30_000,
      });
      const started = p.events().find((e) => e.event === 'start' && e.cli === 'claude') as
        | { env?: Record<string, string> }
        | undefined;
      expect(started?.env?.AM_ROOT).toContain(near);
    } finally {
      rmSync(near, { recursive: true, force: true });
    }
  }, 60_000);

  it('prints the commands to paste and exits 6 with --launcher commands; sessions are created and resumed by name', async () => {
    const p = await setUp('claude');
    const r = await p.run(['launch', '--launcher', 'commands', '--json']);
    expect(r.code).toBe(6);
    const printed = JSON.parse(r.stdout) as Launched;
    const line = printed.agents[0]!.command!;
    expect(line).toContain(`AM_ROOT=${printed.root}`);
    expect(line).toContain('AM_ME=claude');
    expect(line).toContain('AM_SESSION=collab');
    expect(line).toMatch(
      /wake --me claude --detach && claude --session-id [0-9a-f-]{36} --append-system-prompt '/,
    );

    const unknown = await p.run(['session', 'resume', 'feature-x']);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toMatch(/no session 'feature-x'/);
    expect(existsSync(join(p.dir, '.agent-mail', 'feature-x'))).toBe(false);

    expect((await p.run(['session', 'create', 'feature-x'])).code).toBe(0);
    const resumed = await p.run(['session', 'resume', 'feature-x', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const launched = JSON.parse(resumed.stdout) as Launched;
    expect(launched.session).toBe('feature-x');
    await until('claude in feature-x', () =>
      p
        .events()
        .some(
          (e) =>
            e.event === 'start' && (e as { env?: Record<string, string> }).env?.AM_SESSION === 'feature-x',
        ),
    );
  }, 60_000);
});
