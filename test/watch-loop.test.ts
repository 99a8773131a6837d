import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { type GitHubMock, startGitHubMock } from './fixtures/github-api/server.js';
import { backlogTask } from './support/backlog.js';
import { bin, project, troupe, waitFor } from './support/troupe.js';

/**
 * `troupe watch` as a long-running process against the GitHub mock: an issue closed mid-run, a
 * rate limit, a token revoked mid-run, a restart mid-run. Stages are scripted replies that take
 * their time (delay_ms), so a run is in progress while the tracker changes.
 */

const PIPELINE = `agents:
  - id: builder
    runtime: claude
    system_prompt: "Build: {{ input }}"
`;
const slowScript = (ms: number) => `agents:\n  builder:\n    - { reply: "Built it.", delay_ms: ${ms} }\n`;

let mock: GitHubMock;
const watchers: ResultPromise[] = [];
afterEach(async () => {
  for (const w of watchers.splice(0)) {
    w.kill('SIGKILL');
    await w.catch(() => {});
  }
  await mock?.close();
});

function githubProject(scriptMs: number): string {
  return project({
    '.troupe/pipelines/default.yaml': PIPELINE,
    'script.yaml': slowScript(scriptMs),
    '.troupe/config.yaml': `tracker:
  kind: github
  owner: ${mock.owner}
  repo: ${mock.repo}
  api_url: ${mock.url}
  polling: {interval_ms: 200}
`,
  });
}

function startWatch(dir: string): ResultPromise & { lines: () => string[] } {
  const child = execa('node', [bin, 'watch', '--script', 'script.yaml'], {
    cwd: dir,
    reject: false,
    env: { NO_COLOR: '1', GH_TOKEN: mock.token },
    stdin: 'ignore',
    buffer: true,
  });
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  watchers.push(child);
  return Object.assign(child, { lines: () => err.split('\n').filter(Boolean) });
}

async function tasks(dir: string): Promise<Array<{ id: string; status: string }>> {
  return JSON.parse((await troupe(dir, ['list', '--json'])).stdout);
}

const onlyTask = async (dir: string, status: string) => {
  const all = await tasks(dir);
  return all.length === 1 && all[0]!.status === status ? all[0]! : undefined;
};

/** The project's one task, once it is `status`; a timeout says what the tasks and the watcher were at. */
const taskReaches = (dir: string, status: string, watch: { lines: () => string[] }) =>
  waitFor(
    () => onlyTask(dir, status),
    60_000,
    async () =>
      `tasks ${JSON.stringify(await tasks(dir))}; watch said: ${watch.lines().slice(-8).join(' | ')}`,
  );

describe('troupe watch (the loop, on the GitHub mock)', { timeout: 120_000 }, () => {
  it('cancels the task of an issue closed mid-run, and exits 0 on SIGTERM', async () => {
    mock = await startGitHubMock();
    const issue = mock.addIssue({ title: 'one' });
    const dir = githubProject(60_000);
    const watch = startWatch(dir);
    const task = await taskReaches(dir, 'running', watch);
    issue.state = 'closed';
    await taskReaches(dir, 'cancelled', watch);
    expect(watch.lines().some((l) => l.includes(`task ${task.id} cancelled`))).toBe(true);
    watch.kill('SIGTERM');
    expect((await watch).exitCode).toBe(0);
    expect(await tasks(dir)).toHaveLength(1);
  });

  it('a 403 rate limit is one line, a wait until its reset, then the work starts; no crash', async () => {
    mock = await startGitHubMock();
    mock.addIssue({ title: 'one' });
    const reset = Math.floor(Date.now() / 1000) + 2;
    mock.failures.push({
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
      body: { message: 'API rate limit exceeded for user ID 1.' },
    });
    const dir = githubProject(0);
    const watch = startWatch(dir);
    await taskReaches(dir, 'completed', watch);
    // nothing was asked of the tracker between the 403 and its reset (give or take the second)
    const limited = watch.lines().filter((l) => /rate limit/i.test(l));
    expect(limited).toHaveLength(1);
    expect(watch.lines().filter((l) => / {4}at /.test(l))).toEqual([]);
    expect(mock.issues.get(1)!.state).toBe('closed');
    watch.kill('SIGTERM');
    expect((await watch).exitCode).toBe(0);
  });

  it('a token revoked mid-run: a backed-off line, the loop lives, no second task once it is back', async () => {
    mock = await startGitHubMock();
    mock.addIssue({ title: 'one' });
    const dir = githubProject(3_000);
    const watch = startWatch(dir);
    await taskReaches(dir, 'running', watch);
    const good = mock.token;
    mock.token = 'ghp_revoked';
    await new Promise((r) => setTimeout(r, 2_500));
    const auth = watch.lines().filter((l) => /credentials|auth|token/i.test(l));
    expect(auth.length).toBeGreaterThanOrEqual(1);
    // 12 polls in that time; the lines are backed off (1 s, then 2 s …)
    expect(auth.length).toBeLessThanOrEqual(3);
    expect(watch.exitCode).toBeNull(); // still running
    mock.token = good;
    await waitFor(() => (mock.issues.get(1)!.state === 'closed' ? true : undefined), 60_000);
    expect(await tasks(dir)).toMatchObject([{ status: 'completed' }]);
  });

  it('a watcher killed mid-run: the next one carries the same task on, and starts no second', async () => {
    mock = await startGitHubMock();
    mock.addIssue({ title: 'one' });
    // a stage long enough to be seen running, and killed in, when the machine is busy
    const dir = githubProject(10_000);
    const first = startWatch(dir);
    const task = await taskReaches(dir, 'running', first);
    first.kill('SIGKILL');
    await first;
    const second = startWatch(dir);
    await taskReaches(dir, 'completed', second);
    expect((await tasks(dir)).map((t) => t.id)).toEqual([task.id]);
    expect(mock.issues.get(1)!.state).toBe('closed');
    second.kill('SIGTERM');
    expect((await second).exitCode).toBe(0);
  });
});

describe('troupe watch stopped by a signal', { timeout: 120_000 }, () => {
  it('SIGTERM mid-run: exits 0 at once, the task interrupted as troupe run leaves it; the next watcher finishes it', async () => {
    mock = await startGitHubMock();
    mock.addIssue({ title: 'one' });
    const dir = githubProject(8_000);
    const first = startWatch(dir);
    const task = await taskReaches(dir, 'running', first);
    const stopped = Date.now();
    first.kill('SIGTERM');
    expect((await first).exitCode).toBe(0);
    expect(Date.now() - stopped).toBeLessThan(15_000); // not the 8 s stage: interrupted
    expect(mock.issues.get(1)!.state).toBe('open');
    const second = startWatch(dir);
    await taskReaches(dir, 'completed', second);
    expect((await tasks(dir)).map((t) => t.id)).toEqual([task.id]);
    second.kill('SIGTERM');
    expect((await second).exitCode).toBe(0);
  });
});

describe('troupe watch (the loop, on a backlog)', { timeout: 120_000 }, () => {
  const TASK = backlogTask('task-1', { title: 'Flaky', description: 'Do it.' });

  function backlogProject(script: string, settings: string): string {
    return project({
      '.troupe/pipelines/default.yaml': PIPELINE,
      'script.yaml': script,
      'backlog/config.yml': 'statuses: ["To Do", "In Progress", "Done"]\n',
      'backlog/tasks/task-1 - Flaky.md': TASK,
      '.troupe/config.yaml': `tracker:\n  kind: backlog\n  polling: {interval_ms: 200}\n${settings}`,
    });
  }

  function startBacklogWatch(dir: string) {
    const child = execa('node', [bin, 'watch', '--script', 'script.yaml'], {
      cwd: dir,
      reject: false,
      env: { NO_COLOR: '1' },
      stdin: 'ignore',
      buffer: true,
    });
    let err = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    watchers.push(child);
    return Object.assign(child, { err: () => err });
  }

  const taskFile = (dir: string) => readFileSync(join(dir, 'backlog', 'tasks', 'task-1 - Flaky.md'), 'utf8');

  it('retries a failed task with backoff, the same task, then gives up: released, with a comment', async () => {
    const dir = backlogProject(
      'agents:\n  builder:\n    - { error: crash }\n',
      '  max_retries: 2\n  retry_backoff_ms: 300\n',
    );
    const watch = startBacklogWatch(dir);
    await waitFor(() => (watch.err().includes('given up') ? true : undefined), 60_000);
    expect(watch.err()).toContain('retry 1 of 2 in 0 s');
    expect(watch.err()).toContain('retry 2 of 2 in 1 s');
    expect(await tasks(dir)).toMatchObject([{ status: 'failed' }]);
    await waitFor(() => (/^assignee: \[\]$/m.test(taskFile(dir)) ? true : undefined));
    expect(taskFile(dir)).toMatch(/^status: To Do$/m);
    expect(taskFile(dir)).toContain('troupe gave up on this issue after 3 tries');
    // not taken again while it stays where it is
    await new Promise((r) => setTimeout(r, 600));
    expect(await tasks(dir)).toHaveLength(1);
  });

  it('ends a stalled run (no output for stall_timeout_ms) and retries it', async () => {
    const dir = backlogProject(
      'agents:\n  builder:\n    - { reply: "late", delay_ms: 20000 }\n',
      '  max_retries: 1\n  retry_backoff_ms: 200\n  stall_timeout_ms: 700\n',
    );
    const watch = startBacklogWatch(dir);
    await waitFor(() => (watch.err().includes('given up') ? true : undefined), 60_000);
    expect(watch.err().match(/stalled \(no output for 1 s\)/g)).toHaveLength(2);
    expect(watch.err()).toContain('retry 1 of 1');
    expect(await tasks(dir)).toHaveLength(1);
  });
});
