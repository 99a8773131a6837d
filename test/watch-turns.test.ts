import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { type LinearMock, startLinearMock } from './fixtures/linear-api/server.js';
import { tmpRepo } from './support/git-repo.js';
import { bin, troupe } from './support/troupe.js';

/**
 * WORKFLOW.md's agent.max_turns under `troupe watch --workflow`, against the Linear mock: an issue
 * still active when its task completes gets another turn on the previous turn's branch, with
 * `attempt` one higher, until max_turns; an issue the agent moved gets no more.
 */

let mock: LinearMock;
afterEach(async () => mock?.close());

const workflow = (m: LinearMock, maxTurns: number, extra = '') => `---
${extra}tracker:
  kind: linear
  project_slug: ${m.projectSlug}
  endpoint: ${m.url}
  api_key: $MY_LINEAR_KEY
polling:
  interval_ms: 500
agent:
  max_turns: ${maxTurns}
codex:
  command: codex app-server
---
You are working on {{ issue.identifier }}.
{% if attempt %}Attempt {{ attempt }}.{% endif %}
`;

/** One file per turn; the third turn lists what it finds, the second may do `second`. */
const script = (second = '', secondDelayMs = 0) => `agents:
  codex:
    - when: 'Attempt 2\\.'
      write: { turn3.txt: "3" }
      run: ["sh", "-c", "ls turn*.txt > seen.txt"]
      reply: "Third."
    - when: 'Attempt 1\\.'
      write: { turn2.txt: "2" }
${second}      delay_ms: ${secondDelayMs}
      reply: "Second."
    - write: { turn1.txt: "1" }
      reply: "First."
`;

interface Listed {
  id: string;
  status: string;
  input: string;
}

const env = () => ({ MY_LINEAR_KEY: mock.apiKey });
const tasksOf = async (dir: string): Promise<Listed[]> =>
  (JSON.parse((await troupe(dir, ['list', '--json'])).stdout) as Listed[]).reverse();
const attemptOf = (t: Listed) => /Attempt (\d+)\./.exec(t.input)?.[1] ?? null;
const show = async (dir: string, rev: string) =>
  (await execa('git', ['show', rev], { cwd: dir, reject: false })).stdout.trim();
const once = (dir: string) =>
  troupe(dir, ['watch', '--workflow', 'WORKFLOW.md', '--once', '--script', 'script.yaml'], env());

describe('troupe watch --workflow: agent.max_turns (Linear mock)', { timeout: 90_000 }, () => {
  it('an issue left active runs exactly max_turns turns, each on the previous turn’s branch, attempt one higher', async () => {
    mock = await startLinearMock();
    const issue = mock.addIssue({ title: 'Fix login' });
    const dir = await tmpRepo({ 'WORKFLOW.md': workflow(mock, 3), 'script.yaml': script() });

    const first = await once(dir);
    expect(first.code).toBe(0);
    const tasks = await tasksOf(dir);
    expect(tasks.map((t) => t.status)).toEqual(['completed', 'completed', 'completed']);
    expect(tasks.map(attemptOf)).toEqual([null, '1', '2']);
    // the third turn worked on the code the first two left
    const last = tasks[2]!.id;
    expect((await show(dir, `troupe/${last}:seen.txt`)).split('\n')).toEqual([
      'turn1.txt',
      'turn2.txt',
      'turn3.txt',
    ]);
    expect(first.stderr).toMatch(
      new RegExp(`ENG-1: task ${last}: still active after 3 turns \\(agent.max_turns 3\\): no more turns`),
    );
    expect(issue.comments).toHaveLength(1);
    expect(issue.comments[0]!.body).toContain('still active after 3 turns');

    // a later watcher starts no fourth turn
    await once(dir);
    expect(await tasksOf(dir)).toHaveLength(3);
    expect(issue.state).toBe('Todo');
  });

  it('with hooks (the watcher makes the worktree), each turn’s worktree starts on the previous turn’s branch', async () => {
    mock = await startLinearMock();
    mock.addIssue({ title: 'Fix login' });
    const hooks = 'hooks:\n  before_run: echo "turn of $TROUPE_TASK_ID"\n';
    const dir = await tmpRepo({ 'WORKFLOW.md': workflow(mock, 3, hooks), 'script.yaml': script() });

    const result = await once(dir);
    expect(result.code).toBe(0);
    expect(result.stderr.match(/ENG-1: hook before_run \| turn of/g)).toHaveLength(3);
    const tasks = await tasksOf(dir);
    expect(tasks.map(attemptOf)).toEqual([null, '1', '2']);
    expect((await show(dir, `troupe/${tasks[2]!.id}:seen.txt`)).split('\n')).toEqual([
      'turn1.txt',
      'turn2.txt',
      'turn3.txt',
    ]);
  });

  it('an issue the second turn moved out of the active states gets no third turn', async () => {
    mock = await startLinearMock();
    const issue = mock.addIssue({ title: 'Fix login' });
    const move = `      run: ["node", "-e", "fetch('${mock.url.replace('/graphql', '')}/mock/state?issue=ENG-1&state=In%20Review', {method: 'POST'}).then((r) => process.exit(r.ok ? 0 : 1))"]\n`;
    const dir = await tmpRepo({ 'WORKFLOW.md': workflow(mock, 3), 'script.yaml': script(move) });

    const result = await once(dir);
    expect(result.code).toBe(0);
    expect(issue.state).toBe('In Review');
    const tasks = await tasksOf(dir);
    expect(tasks.map(attemptOf)).toEqual([null, '1']);
    expect(tasks.map((t) => t.status)).toEqual(['completed', 'completed']);
    expect(result.stderr).not.toMatch(/no more turns/);
    // the next poll finds the issue out of the active states: released, nothing started
    await once(dir);
    expect(await tasksOf(dir)).toHaveLength(2);
  });

  it('a watcher killed during the second turn: the next one finishes it and runs the third, no turn twice', async () => {
    mock = await startLinearMock();
    mock.addIssue({ title: 'Fix login' });
    const dir = await tmpRepo({ 'WORKFLOW.md': workflow(mock, 3), 'script.yaml': script('', 4000) });

    const watcher = execa('node', [bin, 'watch', '--workflow', 'WORKFLOW.md', '--script', 'script.yaml'], {
      cwd: dir,
      reject: false,
      env: { NO_COLOR: '1', ...env() },
      stdin: 'ignore',
    });
    // until the second turn exists
    const until = Date.now() + 30_000;
    while (Date.now() < until && (await tasksOf(dir)).length < 2) await pause(100);
    watcher.kill('SIGKILL');
    await watcher;
    expect((await tasksOf(dir)).length).toBe(2);

    const after = await once(dir);
    expect(after.code).toBe(0);
    const tasks = await tasksOf(dir);
    expect(tasks.map(attemptOf)).toEqual([null, '1', '2']);
    expect(tasks.map((t) => t.status)).toEqual(['completed', 'completed', 'completed']);
    expect((await show(dir, `troupe/${tasks[2]!.id}:seen.txt`)).split('\n')).toEqual([
      'turn1.txt',
      'turn2.txt',
      'turn3.txt',
    ]);
  });
});

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
