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
    const env = { NO_COLOR: '1', HOME: home };
    const bridge = execa(
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
      { cwd: dir, env, reject: false, stdin: 'ignore' },
    );
    let said = '';
    bridge.stderr?.on('data', (chunk: Buffer) => {
      said += chunk.toString();
    });
    try {
      await waitFor(() => (said.includes('bridging') ? true : undefined));
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
      bridge.kill('SIGTERM');
      await bridge;
    }
  });
});
