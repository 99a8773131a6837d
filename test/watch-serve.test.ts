import { createHmac } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backlogTask } from './support/backlog.js';
import { startWorker, testDatabase } from './support/queue-db.js';
import { serve } from './support/serve.js';
import { project, repoRoot, troupe, waitFor } from './support/troupe.js';

/**
 * `troupe watch` inside `serve --watch` (woken by a signed tracker webhook) and inside
 * `worker --watch`, through the built binary, on a Backlog.md folder; agents are the fake claude.
 */

const PIPELINE = 'agents:\n  - id: builder\n    runtime: claude\n    system_prompt: "Build: {{ input }}"\n';
const SECRET = 'github-webhook-secret-for-the-test';
const TOKEN = 'serve-token-the-tracker-does-not-have';
const fakeClaude = { TROUPE_CLAUDE_BIN: join(repoRoot, 'test', 'fixtures', 'fake-clis', 'claude') };

function backlogProject(ids: string[], intervalMs: number, concurrency = 10): string {
  return project({
    '.troupe/pipelines/default.yaml': PIPELINE,
    '.troupe/config.yaml': `tracker:\n  kind: backlog\n  polling: {interval_ms: ${intervalMs}}\n  concurrency: {max: ${concurrency}}\n`,
    'backlog/config.yml': 'statuses: ["To Do", "In Progress", "Done"]\ndefault_status: "To Do"\n',
    ...Object.fromEntries(ids.map((id) => [`backlog/tasks/${id} - Title.md`, backlogTask(id)])),
  });
}

async function tasksOf(dir: string): Promise<Array<{ id: string; status: string; input: string }>> {
  return JSON.parse((await troupe(dir, ['list', '--json'])).stdout);
}

const issuesOf = (tasks: Array<{ input: string }>) =>
  tasks.map((t) => /\((task-\d+)\)/.exec(t.input)![1]).sort();

const statusOf = (dir: string, id: string) => {
  const file = readdirSync(join(dir, 'backlog', 'tasks')).find((f) => f.startsWith(`${id} `))!;
  return /^status: (.*)$/m.exec(readFileSync(join(dir, 'backlog', 'tasks', file), 'utf8'))![1];
};

describe('serve --watch', { timeout: 90_000 }, () => {
  it('a signed GitHub webhook makes it poll long before its interval; a badly signed one is 401 and starts nothing', async () => {
    // one poll an hour: only the webhook can start task-2 within the test
    const dir = backlogProject(['task-1'], 3_600_000);
    const served = await serve(dir, ['--watch'], {
      ...fakeClaude,
      TROUPE_TOKEN: TOKEN,
      TROUPE_GITHUB_WEBHOOK_SECRET: SECRET,
    });
    let log = '';
    served.process.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
    });
    try {
      await waitFor(() => (served.stdout().includes('dashboard:') ? true : undefined));
      expect(served.stdout()).toContain(`webhooks: ${served.url}api/trackers/webhook/github`);
      // the first poll, at start, takes task-1 and runs it here
      await waitFor(() => (statusOf(dir, 'task-1') === 'Done' ? true : undefined), 30_000);
      expect(log).toMatch(/watch: started \S+ for task-1/);
      writeFileSync(join(dir, 'backlog', 'tasks', 'task-2 - Title.md'), backlogTask('task-2'));

      const hook = `${served.url}api/trackers/webhook/github`;
      const body = JSON.stringify({ action: 'opened', issue: { number: 2, title: '$(rm -rf ~)' } });
      const sign = (secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
      const post = (signature: string) =>
        fetch(hook, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-github-event': 'issues',
            'x-hub-signature-256': signature,
          },
          body,
        });
      const forged = await post(sign('not-the-secret'));
      expect(forged.status).toBe(401);
      // well past the debounce: a wake would have polled and started task-2 by now
      await new Promise((r) => setTimeout(r, 1500));
      expect(issuesOf(await tasksOf(dir))).toEqual(['task-1']);
      expect(statusOf(dir, 'task-2')).toBe('To Do');

      const signed = await post(sign(SECRET));
      expect([signed.status, await signed.json()]).toEqual([202, { poll: 'soon' }]);
      await waitFor(() => (statusOf(dir, 'task-2') === 'Done' ? true : undefined), 30_000);
      const tasks = await tasksOf(dir);
      expect(issuesOf(tasks)).toEqual(['task-1', 'task-2']);
      expect(tasks.every((t) => t.status === 'completed')).toBe(true);
    } finally {
      const code = await served.stop();
      expect(code, log).toBe(0);
    }
  });

  it('without a tracker to watch, serve --watch says so and does not start (usage error)', async () => {
    const dir = project({ '.troupe/pipelines/default.yaml': PIPELINE });
    const run = await troupe(dir, ['serve', '--watch', '--port', '0', '--no-token']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/no tracker to watch/);
    expect(run.stdout).not.toMatch(/listening/);
  });
});

describe('worker --watch', { timeout: 120_000 }, () => {
  it('two workers on one SQLite store start one task per issue, and run them in their own process', async () => {
    await using db = await testDatabase();
    const ids = ['task-1', 'task-2', 'task-3', 'task-4', 'task-5', 'task-6'];
    // two at a time across both: the workers race for every free slot
    const dir = backlogProject(ids, 200, 2);
    const args = ['--watch', '--runtimes', 'claude'];
    const workers = await Promise.all([
      startWorker(dir, db.url, args, fakeClaude),
      startWorker(dir, db.url, args, fakeClaude),
    ]);
    try {
      await waitFor(() => (ids.every((id) => statusOf(dir, id) === 'Done') ? true : undefined), 60_000);
      const tasks = await tasksOf(dir);
      expect(issuesOf(tasks)).toEqual(ids);
      expect(tasks.every((t) => t.status === 'completed')).toBe(true);
      // each task was started by one worker's watch, and no issue by both
      const started = workers.flatMap((w) => [
        ...w.stderr().matchAll(/watch: started (\S+) for (task-\d+)/g),
      ]);
      expect(started.map((m) => m[2]).sort()).toEqual(ids);
      expect(started.map((m) => m[1]).sort()).toEqual(tasks.map((t) => t.id).sort());
    } finally {
      for (const w of workers) expect(await w.stop()).toBe(0);
    }
  });
});
