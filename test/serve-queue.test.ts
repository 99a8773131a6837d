import { describe, expect, it } from 'vitest';
import { startWorker, testDatabase } from './support/queue-db.js';
import { serve } from './support/serve.js';
import { eventLog, project, troupe, waitFor } from './support/troupe.js';

/**
 * `troupe serve` beside workers (issue #33, D5): with a work queue, the server hands tasks to the
 * queue's workers, in the lanes their steps need, and never runs a stage itself — not the tasks it
 * finds at start, not the ones submitted to it, not the ones a person's answer lets go on.
 */

// each stage prints its process tag, which names the process that ran it (runtimes/supervisor.ts)
const tagged = `    runtime: command
    command: [sh, -c, 'echo "$TROUPE_AGENT_TAG"']
`;
const pipeline = `agents:
  - id: writer
${tagged}    handoffs: [{to: approver}]
  - id: approver
${tagged}    gate: {type: human}
    handoffs: [{to: trainer, condition: on_approve}]
  - id: trainer
${tagged}    worker_labels: [gpu]
`;

/** The pid of the process that ran each stage, read from the tag the stage printed. */
function runnersOf(dir: string, id: string): Record<string, number> {
  const runners: Record<string, number> = {};
  for (const e of eventLog(dir, id))
    if (e.type === 'stage_completed') {
      const owner = /\/([0-9a-z]+)\./.exec(String(e.data.output))?.[1];
      runners[e.data.agent as string] = owner ? Number.parseInt(owner, 36) : -1;
    }
  return runners;
}

const lastType = (dir: string, id: string) => eventLog(dir, id).at(-1)?.type;

describe('troupe serve with a work queue', () => {
  it('hands every task to the workers, by lane and label; never runs a stage in the server', async () => {
    await using db = await testDatabase();
    const dir = project({ '.troupe/pipelines/p.yaml': pipeline });
    const env = { TROUPE_QUEUE: db.url };
    // a task queued before the server starts: it used to be "resumed" by the server at start
    const queued = await troupe(dir, ['run', 'first', '--file', '.troupe/pipelines/p.yaml', '--detach'], env);
    expect(queued.code, queued.stderr).toBe(0);
    const first = queued.stdout.trim();
    const served = await serve(dir, [], { ...env, TROUPE_LEASE_SECONDS: '1' });
    try {
      await waitFor(() =>
        served.stdout().includes('tasks: handed to the work queue at') ? true : undefined,
      );
      const posted = await fetch(new URL('/api/run', served.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ pipeline: 'p', input: 'second' }),
      });
      const answer = (await posted.json()) as { task_id?: string; error?: unknown };
      expect(posted.status, JSON.stringify(answer)).toBe(202);
      const second = answer.task_id!;
      // a plain worker: the writers run there, and both tasks stop at the person's gate
      const plain = await startWorker(dir, db.url, ['--runtimes', 'command']);
      for (const id of [first, second])
        await waitFor(() => (lastType(dir, id) === 'gate_waiting' ? true : undefined), 30_000);
      // the person approves in the dashboard; the task goes on in the workers, the trainer on the gpu one
      for (const id of [first, second]) {
        const approved = await fetch(new URL(`/api/tasks/${id}/approve`, served.url), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
        expect(approved.status).toBe(202);
      }
      const gpu = await startWorker(dir, db.url, ['--runtimes', 'command', '--labels', 'gpu']);
      for (const id of [first, second])
        await waitFor(() => (lastType(dir, id) === 'task_completed' ? true : undefined), 30_000);
      for (const id of [first, second])
        expect(runnersOf(dir, id)).toEqual({ writer: plain.pid, approver: plain.pid, trainer: gpu.pid });
      expect([await plain.stop(), await gpu.stop()]).toEqual([0, 0]);
    } finally {
      await served.stop();
    }
  }, 120_000);

  it('--no-queue runs them in the server, as without a queue', async () => {
    await using db = await testDatabase();
    const dir = project({ '.troupe/pipelines/p.yaml': pipeline });
    const queued = await troupe(dir, ['run', 'first', '--file', '.troupe/pipelines/p.yaml', '--detach'], {
      TROUPE_QUEUE: db.url,
    });
    const id = queued.stdout.trim();
    const served = await serve(dir, ['--no-queue'], { TROUPE_QUEUE: db.url });
    try {
      await waitFor(() => (served.stdout().includes('tasks: run in this process') ? true : undefined));
      await waitFor(() => (lastType(dir, id) === 'gate_waiting' ? true : undefined), 30_000);
      expect(runnersOf(dir, id)).toEqual({ writer: served.process.pid, approver: served.process.pid });
    } finally {
      await served.stop();
    }
  }, 60_000);
});
