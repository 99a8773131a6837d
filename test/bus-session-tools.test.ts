import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type LiveProject, liveProject } from './support/live.js';

// AMQ's session tools as its README types them — a plain shell warned when mail misses the live
// session, `env`, `shell-setup`, `route explain`, `trace`, `send --from-session` — through the built CLI.

let project: LiveProject | undefined;
afterEach(() => project?.close());

async function setUp(): Promise<LiveProject> {
  project = await liveProject();
  const setup = await project.run(['bus', 'setup', '--agents', 'claude,codex', '--yes']);
  expect(setup.code, setup.stderr).toBe(0);
  return project;
}

/** Runs a shell script in the project with the test's environment (troupe on PATH as `troupe`). */
function sh(p: LiveProject, script: string, extra: Record<string, string> = {}): string {
  return execFileSync('bash', ['-c', script], {
    cwd: p.dir,
    env: { ...process.env, ...p.env, ...extra },
    encoding: 'utf8',
  });
}

const bin = join(__dirname, '..', 'bin', 'troupe.js');

describe('mail from a plain shell in a live project', () => {
  it('warns in one line where it went and how to choose a session; with a session, or pinned, no warning', async () => {
    const p = await setUp();
    const base = join(p.dir, '.agent-mail');
    const plain = await p.run(['bus', 'send', '--me', 'user', '--to', 'codex', '--body', 'hello']);
    expect(plain.code, plain.stderr).toBe(0);
    const lines = plain.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `troupe: warning: no session chosen: this mail goes to the base root ${base}, which live agents do not read; they are in session collab — pass --session collab, or pin this shell: eval "$(${lines[0]!.match(/eval "\$\((.*) bus env/)![1]} bus env --session collab --me user)"`,
    );
    expect(plain.stderr).toMatch(
      /--session collab, or pin this shell: eval "\$\(.* bus env --session collab --me user\)"$/,
    );

    const chosen = await p.run([
      'bus',
      'send',
      '--me',
      'user',
      '--to',
      'codex',
      '--session',
      'collab',
      '--body',
      'x',
    ]);
    expect(chosen.code).toBe(0);
    expect(chosen.stderr).toBe('');

    // pinned as the warning says: the shell's sends go to the session, silently
    const out = sh(
      p,
      `eval "$(node ${bin} bus env --session collab --me user --export 2>/dev/null)" && node ${bin} bus send --to codex --body pinned --json 2>&1`,
    );
    expect(JSON.parse(out)).toMatchObject({ root: join(base, 'collab') });
  }, 60_000);
});

describe('a reply from a plain shell in a live project', () => {
  it('warns as send does when the reply goes to the base root and its recipient lives in a session; troupe amq reply too', async () => {
    const p = await setUp();
    const base = join(p.dir, '.agent-mail');
    // mail to the user at the base root (an agent pinned there, or an older script)
    for (const subject of ['one', 'two']) {
      const sent = await p.run([
        'bus',
        'send',
        '--root',
        base,
        '--me',
        'codex',
        '--to',
        'user',
        '--subject',
        subject,
        '--body',
        'question',
        '--json',
      ]);
      expect(sent.code, sent.stderr).toBe(0);
    }
    const listed = await p.run(['bus', 'list', '--me', 'user', '--json']);
    const ids = (JSON.parse(listed.stdout) as Array<{ id: string; subject: string }>).map((m) => m.id);
    expect(ids).toHaveLength(2);

    const plain = await p.run(['bus', 'reply', '--me', 'user', '--id', ids[0]!, '--body', 'answer']);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr.trim().split('\n')).toHaveLength(1);
    expect(plain.stderr).toContain(
      `troupe: warning: no session chosen: this mail goes to the base root ${base}, which live agents do not read; they are in session collab — pass --session collab, or pin this shell: eval "$(`,
    );
    expect(plain.stderr).toMatch(/ bus env --session collab --me user\)"$/);
    const amq = await p.run(['amq', 'reply', '--me', 'user', '--id', ids[1]!, '--body', 'answer']);
    expect(amq.code, amq.stderr).toBe(0);
    expect(amq.stderr).toMatch(/^troupe: warning: no session chosen: this mail goes to the base root/);

    // a reply in the session, where codex reads: no warning
    const inSession = await p.run([
      'bus',
      'send',
      '--me',
      'codex',
      '--to',
      'user',
      '--session',
      'collab',
      '--body',
      'q',
      '--json',
    ]);
    const id = (JSON.parse(inSession.stdout) as { id: string }).id;
    const pinned = await p.run(['bus', 'reply', '--me', 'user', '--id', id, '--body', 'a'], {
      AM_ROOT: join(base, 'collab'),
    });
    expect(pinned.code, pinned.stderr).toBe(0);
    expect(pinned.stderr).toBe('');
  }, 60_000);
});

describe('env, shell-setup, route explain, trace, --from-session', () => {
  it('env prints the whole context (AM_ROOT_ID included), JSON, the session name; a replaced root refuses the pin', async () => {
    const p = await setUp();
    const base = join(p.dir, '.agent-mail');
    const r = await p.run(['bus', 'env', '--session', 'collab', '--me', 'claude', '--export']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `^export AM_ROOT='${base}/collab'\nexport AM_BASE_ROOT='${base}'\nexport AM_ROOT_ID='troupe1:[0-9a-f]+:[0-9a-f]+'\nexport AM_BASE_ROOT_ID='troupe1:[0-9a-f]+:[0-9a-f]+'\nexport AM_SESSION='collab'\nexport AM_ME='claude'$`,
      ),
    );
    expect(r.stderr).toMatch(/pinned to .*collab \(session collab\)/);
    const fish = await p.run(['bus', 'env', '--shell', 'fish']);
    expect(fish.stdout).toContain(`set -gx AM_ROOT '${base}'\n`);
    expect(fish.stdout).toContain("set -gx AM_SESSION ''\n");
    expect(fish.stdout.endsWith('set -e AM_ME')).toBe(true);
    const json = JSON.parse((await p.run(['bus', 'env', '--session', 'collab', '--json'])).stdout);
    expect(json).toMatchObject({
      schema_version: 1,
      root: join(base, 'collab'),
      base_root: base,
      session_name: 'collab',
      in_session: true,
      root_source: 'flag',
    });
    expect((await p.run(['bus', 'env', '--session', 'nope'])).code).toBe(3);
    expect((await p.run(['bus', 'env', '--json', '--export'])).code).toBe(2);
    const name = sh(
      p,
      `eval "$(node ${bin} bus env --session collab)" && node ${bin} bus env --session-name`,
    );
    expect(name).toBe('collab\n');

    // the pinned directory replaced by another one (same path): consuming commands refuse (exit 5)
    const pin = sh(p, `node ${bin} bus env --session collab --me claude`);
    renameSync(join(base, 'collab'), join(base, 'collab-old'));
    mkdirSync(join(base, 'collab', 'agents', 'claude'), { recursive: true });
    let code = 0;
    try {
      sh(p, `${pin}\nnode ${bin} bus drain`);
    } catch (error) {
      code = (error as { status: number }).status;
    }
    expect(code).toBe(5);
  }, 60_000);

  it('shell-setup defines amc/amx/amg that pin the session and run the CLI, without bypass flags', async () => {
    const p = await setUp();
    const r = await p.run(['bus', 'shell-setup', '--shell', 'bash']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^# troupe co-op aliases/);
    expect(r.stdout).not.toMatch(/dangerously|bypass/);
    // run the claude shortcut: the fake claude records the environment it started with
    sh(p, `${r.stdout}\namc collab --hello </dev/null`);
    const started = p.events().find((e) => e.cli === 'claude' && e.event === 'start') as
      | { env?: Record<string, string>; argv?: string[] }
      | undefined;
    expect(started?.env?.AM_SESSION).toBe('collab');
    expect(started?.env?.AM_ME).toBe('claude');
    expect((await p.run(['bus', 'shell-setup', '--claude-alias', 'a;b'])).code).toBe(2);
  }, 60_000);

  it('route explain says where mail would go without sending; trace follows a message to its receipt and reply', async () => {
    const p = await setUp();
    const base = join(p.dir, '.agent-mail');
    const explain = await p.run([
      'bus',
      'route',
      'explain',
      '--me',
      'user',
      '--to',
      'codex',
      '--session',
      'collab',
      '--json',
    ]);
    expect(explain.code, explain.stderr).toBe(0);
    const route = JSON.parse(explain.stdout);
    expect(route).toMatchObject({
      schema_version: 1,
      routable: true,
      source_root: base,
      delivery_root: join(base, 'collab'),
      target_session: 'collab',
      thread: 'p2p/user__collab:codex',
    });
    expect(route.argv.slice(-8)).toEqual([
      '--root',
      base,
      '--me',
      'user',
      '--to',
      'codex',
      '--session',
      'collab',
    ]);
    expect(
      (await p.run(['bus', 'list', '--me', 'codex', '--root', join(base, 'collab'), '--json'])).stdout,
    ).toBe('[]');
    const bad = await p.run([
      'bus',
      'route',
      'explain',
      '--me',
      'user',
      '--to',
      'codex',
      '--session',
      'nope',
      '--json',
    ]);
    expect(bad.code).toBe(3);
    expect(JSON.parse(bad.stdout)).toMatchObject({
      routable: false,
      error: expect.stringMatching(/unknown session 'nope'/),
    });

    const root = join(base, 'collab');
    const sent = JSON.parse(
      (
        await p.run([
          'bus',
          'send',
          '--root',
          root,
          '--me',
          'user',
          '--to',
          'codex',
          '--body',
          'review',
          '--json',
        ])
      ).stdout,
    ) as { id: string };
    expect((await p.run(['bus', 'drain', '--root', root, '--me', 'codex'])).code).toBe(0);
    expect(
      (await p.run(['bus', 'reply', '--root', root, '--me', 'codex', '--id', sent.id, '--body', 'LGTM']))
        .code,
    ).toBe(0);
    const traced = await p.run(['bus', 'trace', sent.id, '--root', root, '--json']);
    expect(traced.code, traced.stderr).toBe(0);
    const t = JSON.parse(traced.stdout);
    expect(t).toMatchObject({ schema: 'amq/trace/v1', message_id: sent.id, status: 'found', root });
    expect(
      t.legs.message.evidence.map((e: { kind: string; agent: string }) => `${e.kind}:${e.agent}`).sort(),
    ).toEqual(['inbox_cur:codex', 'outbox_sent:user']);
    expect(t.legs.route.evidence[0]).toMatchObject({ from: 'user', to: ['codex'] });
    expect(t.legs.delivery.evidence[0]).toMatchObject({
      agent: 'codex',
      state: 'read',
      durability: 'no_evidence',
    });
    expect(t.legs.receipts.evidence[0]).toMatchObject({ stage: 'drained', consumer: 'codex' });
    expect(t.legs.thread.evidence[0]).toMatchObject({ relation: 'referred_by', from: 'codex' });
    expect(t.legs.dlq.status).toBe('no_evidence');
    expect(t.legs.notification).toMatchObject({ status: 'no_evidence', state: 'ledger_absent' });
    const missing = await p.run(['bus', 'trace', '2026-01-01T00-00-00.000Z_pid1_deadbeef', '--root', root]);
    expect(missing.code).toBe(3);
    expect(missing.stdout).toMatch(/: not_found\nmessage: no_evidence\n/);
  }, 60_000);

  it('send --from-session delivers between two sessions from a shell in neither, replies going back to the source', async () => {
    const p = await setUp();
    const base = join(p.dir, '.agent-mail');
    expect((await p.run(['session', 'create', 'feature-a'])).code).toBe(0);
    expect((await p.run(['session', 'create', 'feature-b'])).code).toBe(0);
    const r = await p.run([
      'bus',
      'send',
      '--root',
      '.agent-mail',
      '--from-session',
      'feature-a',
      '--me',
      'claude',
      '--to',
      'codex',
      '--session',
      'feature-b',
      '--body',
      'Please review the setup',
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const sent = JSON.parse(r.stdout);
    expect(sent).toMatchObject({
      root: join(base, 'feature-b'),
      source_root: join(base, 'feature-a'),
      thread: 'p2p/feature-a:claude__feature-b:codex',
      outbox: expect.stringContaining(join(base, 'feature-a', 'agents', 'claude', 'outbox')),
    });
    const reply = await p.run([
      'bus',
      'reply',
      '--root',
      join(base, 'feature-b'),
      '--me',
      'codex',
      '--id',
      sent.id,
      '--body',
      'ok',
      '--json',
    ]);
    expect(reply.code, reply.stderr).toBe(0);
    expect(JSON.parse(reply.stdout)).toMatchObject({ root: join(base, 'feature-a') });
    // --from-session needs --session, and a base root
    expect(
      (
        await p.run([
          'bus',
          'send',
          '--from-session',
          'feature-a',
          '--me',
          'claude',
          '--to',
          'codex',
          '--body',
          'x',
        ])
      ).code,
    ).toBe(2);
    expect(
      (
        await p.run([
          'bus',
          'send',
          '--root',
          join(base, 'feature-b'),
          '--from-session',
          'feature-a',
          '--me',
          'claude',
          '--to',
          'codex',
          '--session',
          'feature-b',
          '--body',
          'x',
        ])
      ).code,
    ).toBe(2);
  }, 60_000);
});
