import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { bin, project, repoRoot, troupe, waitFor } from './support/troupe.js';

/** A Claude Code Agent Team on disk (test/fixtures/claude-team), in a HOME of its own. */
function teamHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'troupe-home-'));
  cpSync(join(repoRoot, 'test', 'fixtures', 'claude-team'), join(home, '.claude'), { recursive: true });
  return home;
}

/** `bus swarm bridge --team review-squad --me codex` into `.agent-mail`, rescanning every 100 ms, once it says it runs. */
async function startBridge(dir: string, env: Record<string, string>) {
  const child = execa(
    'node',
    [
      bin,
      'bus',
      'swarm',
      'bridge',
      '--team',
      'review-squad',
      '--me',
      'codex',
      '--root',
      '.agent-mail',
      '--poll-interval',
      '100ms',
    ],
    { cwd: dir, env: { NO_COLOR: '1', ...env }, reject: false, stdin: 'ignore' },
  );
  let said = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    said += chunk.toString();
  });
  await waitFor(() => (said.includes('bridging') || child.exitCode !== null ? true : undefined));
  return {
    child,
    stderr: () => said,
    async stop() {
      child.kill('SIGTERM');
      await child;
    },
  };
}

const json = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;

interface Listed {
  from: string;
  thread: string;
  subject: string;
  kind: string;
  labels?: string[];
  context?: Record<string, unknown>;
}

describe('troupe bus swarm: a Claude Code Agent Team from the bus', () => {
  it('lists teams, joins one, and claims a task the way the team would (blockers, owners)', async () => {
    const home = teamHome();
    const dir = project();
    const swarm = (args: string[]) => troupe(dir, ['bus', 'swarm', ...args], { HOME: home });

    const listed = await swarm(['list', '--json']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject([
      {
        name: 'review-squad',
        members: [{ name: 'team-lead' }, { name: 'security', agentId: 'security@review-squad' }],
      },
    ]);

    const joined = await swarm(['join', '--team', 'review-squad', '--me', 'codex']);
    expect(joined.stdout).toContain('joined team review-squad as codex (codex@review-squad)');
    const config = json(join(home, '.claude/teams/review-squad/config.json'));
    expect(config.leadSessionId).toBe('5f0c2a7e-1d3b-4c8e-9a61-2b7d0e4f9c13'); // kept as Claude Code wrote it
    const members = config.members as Array<Record<string, unknown>>;
    expect(members[1]!.prompt).toBe('Review app/services/auth for vulnerabilities.');
    expect(members[2]).toMatchObject({ agentId: 'codex@review-squad', name: 'codex', agentType: 'troupe' });
    expect((await swarm(['join', '--team', 'review-squad', '--me', 'codex'])).stdout).toContain('already in');

    const blocked = await swarm(['claim', '--team', 'review-squad', '--task', '3', '--me', 'codex']);
    expect(blocked.code).not.toBe(0);
    expect(blocked.stderr).toContain('blocked by unfinished task(s) 2');
    const claimed = await swarm(['claim', '--team', 'review-squad', '--task', '2', '--me', 'codex']);
    expect(claimed.code).toBe(0);
    const task = json(join(home, '.claude/tasks/review-squad/2.json'));
    expect(task).toMatchObject({
      id: '2',
      owner: 'codex',
      status: 'in_progress',
      activeForm: 'Reviewing token refresh',
    });
    const taken = await swarm(['claim', '--team', 'review-squad', '--task', '2', '--me', 'gemini']);
    expect(taken.code).not.toBe(0);
    expect(taken.stderr).toContain('already claimed by codex');
    const missing = await swarm(['claim', '--team', 'nope', '--task', '2', '--me', 'codex']);
    expect(missing.stderr.trim().split('\n')).toHaveLength(2); // the error and its hint, no stack
  });

  it("bridges the team's task changes into the agent's inbox as ordinary bus messages", async () => {
    const home = teamHome();
    const dir = project();
    await troupe(dir, ['bus', 'init', '--root', '.agent-mail', '--agents', 'codex']);
    const bridge = await startBridge(dir, { HOME: home });
    try {
      const tasks = join(home, '.claude/tasks/review-squad');
      writeFileSync(
        join(tasks, '4.json'),
        `${JSON.stringify({ id: '4', subject: 'Check password reset', status: 'pending', owner: '', blocks: [], blockedBy: [] }, null, 2)}\n`,
      );
      const mailed = (events: string[]) =>
        waitFor(async () => {
          const r = await troupe(dir, ['bus', 'list', '--me', 'codex', '--root', '.agent-mail', '--json']);
          const items = JSON.parse(r.stdout) as Listed[];
          const seen = new Set(items.map((m) => m.context?.event));
          return events.every((e) => seen.has(e)) ? items : undefined;
        }, 20_000);
      const swarm = (verb: string) =>
        troupe(dir, ['bus', 'swarm', verb, '--team', 'review-squad', '--task', '2', '--me', 'codex'], {
          HOME: home,
        });
      await swarm('claim');
      // each change is mailed once the bridge sees it: claim and completion one after the other
      await mailed(['task_added', 'task_assigned']);
      await swarm('complete');
      const mail = await mailed(['task_added', 'task_assigned', 'task_completed', 'task_unblocked']);
      const added = mail.find((m) => m.context?.event === 'task_added')!;
      expect(added).toMatchObject({
        from: 'swarm-bridge',
        thread: 'swarm/review-squad',
        kind: 'status',
        subject: '[swarm] task_added: Check password reset',
        labels: ['swarm', 'task_added'],
        context: { team: 'review-squad', task_id: '4', event: 'task_added', source: 'swarm-bridge' },
      });
      expect(mail.find((m) => m.context?.event === 'task_unblocked')?.context?.task_id).toBe('3');
      // the tasks there when the bridge started are its baseline: task 1 is never mailed
      expect(mail.some((m) => m.context?.task_id === '1')).toBe(false);
      // a relay, as AMQ's bridge: no mailbox (outbox, presence) for swarm-bridge
      expect(existsSync(join(dir, '.agent-mail', 'agents', 'swarm-bridge'))).toBe(false);
    } finally {
      await bridge.stop();
    }
  });
});

/** The fixture team in a temp CLAUDE_CONFIG_DIR, with `patch(dir)` making it hostile. */
function hostileTeam(patch: (claude: string) => void) {
  const claude = mkdtempSync(join(tmpdir(), 'troupe-claude-'));
  cpSync(join(repoRoot, 'test', 'fixtures', 'claude-team'), claude, { recursive: true });
  patch(claude);
  const dir = project();
  const env = { CLAUDE_CONFIG_DIR: claude };
  const swarm = (args: string[]) => troupe(dir, ['bus', 'swarm', ...args], env);
  const mail = async () => {
    const r = await troupe(dir, ['bus', 'list', '--me', 'codex', '--root', '.agent-mail', '--json']);
    return JSON.parse(r.stdout) as Listed[];
  };
  const mailed = (taskId: string) =>
    waitFor(async () => {
      const items = await mail();
      return items.some((m) => m.context?.task_id === taskId) ? items : undefined;
    }, 20_000);
  const addTask = (id: string, subject: string) =>
    writeFileSync(
      join(claude, 'tasks', 'review-squad', `${id}.json`),
      JSON.stringify({ id, subject, status: 'pending', owner: '', blockedBy: [] }),
    );
  return { claude, dir, env, swarm, mail, mailed, addTask };
}

const writeJson = (path: string, value: unknown) => writeFileSync(path, JSON.stringify(value));
const occurrences = (text: string, part: string) => text.split(part).length - 1;

describe('troupe bus swarm: hostile team files get one warning each, never a crash or a flood', () => {
  it('skips members that are not members (null, a number, a name that is not a string), and still bridges', async () => {
    const team = hostileTeam((claude) => {
      const config = join(claude, 'teams', 'review-squad', 'config.json');
      const raw = json(config);
      writeJson(config, { ...raw, members: [...(raw.members as unknown[]), null, 42, { name: { x: 1 } }] });
    });
    const listed = await team.swarm(['list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('review-squad  2 member(s): team-lead, security');
    expect(listed.stderr).toContain('members[2] skipped');
    expect(listed.stderr).toContain('members[3] skipped');
    expect(listed.stderr).toContain('members[4] skipped');
    expect((await team.swarm(['join', '--team', 'review-squad', '--me', 'codex'])).code).toBe(0);
    // joining keeps the entries troupe passed over: they are not its to delete
    const members = json(join(team.claude, 'teams', 'review-squad', 'config.json')).members as unknown[];
    expect(members.slice(2)).toEqual([
      null,
      42,
      { name: { x: 1 } },
      expect.objectContaining({ name: 'codex' }),
    ]);

    await troupe(team.dir, ['bus', 'init', '--root', '.agent-mail', '--agents', 'codex']);
    const bridge = await startBridge(team.dir, team.env);
    try {
      team.addTask('4', 'Check password reset');
      await team.mailed('4');
      expect(bridge.child.exitCode).toBeNull();
      expect(occurrences(bridge.stderr(), 'members[2] skipped')).toBe(1);
    } finally {
      await bridge.stop();
    }
  });

  it('keeps one task per id: a second file with the same id is skipped once, and rescans send nothing new', async () => {
    const team = hostileTeam((claude) => {
      const tasks = join(claude, 'tasks', 'review-squad');
      // two files say they are task 2, in two states: each rescan used to mail both changes
      writeJson(join(tasks, '13.json'), { id: '2', subject: 'Impostor', status: 'completed', owner: '' });
    });
    const listed = await team.swarm(['tasks', '--team', 'review-squad', '--json']);
    const tasks = JSON.parse(listed.stdout) as Array<{ id: string; subject: string }>;
    expect(tasks.filter((t) => t.id === '2').map((t) => t.subject)).toEqual(['Review token refresh']);
    expect(listed.stderr).toMatch(/13\.json: task 2 is already .*2\.json/);

    await troupe(team.dir, ['bus', 'init', '--root', '.agent-mail', '--agents', 'codex']);
    const bridge = await startBridge(team.dir, team.env);
    try {
      team.addTask('4', 'First new task');
      await team.mailed('4');
      team.addTask('5', 'Second new task'); // mailed after more rescans of the two files
      const mail = await team.mailed('5');
      expect(mail.map((m) => m.context?.task_id).sort()).toEqual(['4', '5']);
      expect(occurrences(bridge.stderr(), '13.json')).toBe(1);
    } finally {
      await bridge.stop();
    }
  });

  it('refuses to claim a task nested 5,000 levels deep with a clear error, and lists the others', async () => {
    const deep = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    const team = hostileTeam((claude) => {
      writeFileSync(
        join(claude, 'tasks', 'review-squad', '9.json'),
        `{"id":"9","subject":"deep","status":"pending","owner":"","x":${deep}}`,
      );
    });
    const listed = await team.swarm(['tasks', '--team', 'review-squad']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('#2 [pending] Review token refresh');
    expect(listed.stderr).toContain('9.json nests deeper than 100 levels');
    const claim = await team.swarm(['claim', '--team', 'review-squad', '--task', '9', '--me', 'codex']);
    expect(claim.code).not.toBe(0);
    expect(claim.stderr).toContain('task 9 of team review-squad cannot be used');
    expect(claim.stderr).toContain('nests deeper than 100 levels');
    expect(claim.stderr).not.toContain('call stack');
  });

  it('prints task subjects without terminal escapes, and a newline in one forges no line', async () => {
    const team = hostileTeam((claude) => {
      writeJson(join(claude, 'tasks', 'review-squad', '7.json'), {
        id: '7',
        subject: '\u001b[2J\u001b]0;title-pwn\u0007Innocent\nFake: approved',
        status: 'pending',
        owner: '',
      });
    });
    const listed = await team.swarm(['tasks', '--team', 'review-squad']);
    expect(listed.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
    expect(listed.stdout).toMatch(/^#7 \[pending\] Innocent Fake: approved$/m);
    expect(listed.stdout).toContain('#3 [pending] Write the review summary  blocked by 1, 2');
    expect(listed.stdout.split('\n').filter((l) => l.startsWith('Fake'))).toEqual([]);
  });
});
