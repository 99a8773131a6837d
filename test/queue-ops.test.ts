import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startWorker, type TestDatabase, testDatabase } from './support/queue-db.js';
import { serve } from './support/serve.js';
import { eventLog, project, troupe, waitFor } from './support/troupe.js';

/**
 * The queue seen and steered by an operator (docs/distributed.md, "Operating the queue"):
 * `troupe queue`, `troupe workers`, `troupe worker drain|stop <id>`, `troupe queue pause|resume`,
 * gone workers expiring. Real workers on the local PostgreSQL, the store the project's SQLite.
 */

const chain = `agents:
  - id: writer
    runtime: claude
    handoffs: [{to: editor}]
  - id: editor
    runtime: codex
`;

interface Worker {
  id: string;
  pid: number;
  version: string | null;
  gone: boolean;
  tasks: string[];
  stages: number;
  takeovers: number;
  leaseLosses: number;
  wakeFailures: number;
}

interface Overview {
  lanes: Array<{
    lane: string;
    backlog: number;
    due: number;
    oldestWaitSeconds: number | null;
    active: number;
    paused: boolean;
  }>;
  active: Array<{ lane: string; taskId: string; holder: string | null }>;
  deadLetters: number;
  workers: Worker[];
  totals: { stages: number; takeovers: number; leaseLosses: number; wakeFailures: number };
  levers: Array<{ kind: string; target: string; action: string; done: string | null }>;
}

async function overview(dir: string, url: string): Promise<Overview> {
  const run = await troupe(dir, ['queue', '--json'], { TROUPE_QUEUE: url });
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout);
}

async function detach(dir: string, url: string, args: string[]): Promise<string> {
  const run = await troupe(dir, ['run', ...args, '--detach'], { TROUPE_QUEUE: url });
  expect([run.code, run.stderr]).toEqual([0, '']);
  return run.stdout.trim();
}

function lastStatus(dir: string, id: string): string {
  return (
    eventLog(dir, id).findLast((e) => e.type.startsWith('task_') && e.type !== 'task_resumed')?.type ?? ''
  );
}

async function workerId(db: TestDatabase, pid: number): Promise<string> {
  return waitFor(async () => {
    const rows = await db.query<{ id: string }>('SELECT id FROM troupe_workers WHERE pid = $1', [pid]);
    return rows[0]?.id;
  });
}

describe('operating the queue', () => {
  it('troupe queue shows the backlog per lane and who holds an active job; `worker stop <id>` from another process ends a busy worker, exit 0', async () => {
    await using db = await testDatabase();
    const dir = project({
      'p.yaml': chain,
      's.yaml': 'agents:\n  writer: [{reply: "draft", delay_ms: 600000}]\n  editor: ["edited"]\n',
    });
    const worker = await startWorker(dir, db.url, ['--runtimes', 'claude', '--grace', '600']);
    const id = await workerId(db, worker.pid);
    const task = await detach(dir, db.url, ['go', '--file', 'p.yaml', '--script', 's.yaml']);
    // the writer's stage runs (ten minutes, unless stopped): its job is active, held by the worker
    const held = await waitFor(async () => {
      const seen = await overview(dir, db.url);
      return seen.active.find((job) => job.taskId === task && job.holder === id) ? seen : undefined;
    }, 30_000);
    expect(held.lanes.find((lane) => lane.lane === 'claude')).toMatchObject({ active: 1, paused: false });
    expect(held.workers.map((w) => [w.id, w.version, w.gone])).toEqual([
      [id, expect.stringMatching(/^\d+\.\d+\.\d+/), false],
    ]);
    const text = await troupe(dir, ['queue'], { TROUPE_QUEUE: db.url });
    expect(text.stdout).toContain('claude: backlog 0 (0 due), active 1, retrying 0, failed 0');
    expect(text.stdout).toContain(`  ${task} on claude since `);
    expect(text.stdout).toContain(`: ${id}`);
    const listed = await troupe(dir, ['workers'], { TROUPE_QUEUE: db.url });
    expect(listed.stdout).toContain('lane claude: backlog 0 (0 due), active 1');
    expect(listed.stdout).toMatch(
      new RegExp(`${id}  troupe \\d+\\.\\d+\\.\\d+\\S*  claude  running ${task}`),
    );

    // stop: no grace (the worker's own --grace is 600 s), the stage handed back, exit 0
    const stop = await troupe(dir, ['worker', 'stop', id], { TROUPE_QUEUE: db.url });
    expect([stop.code, stop.stdout, stop.stderr]).toEqual([
      0,
      `${id}: asked to stop (it reads this within 5 s)`,
      '',
    ]);
    expect((await worker.child).exitCode).toBe(0);
    expect(worker.stderr()).toContain('stopping (asked by `troupe worker stop`)');
    const after = await overview(dir, db.url);
    expect(after.levers).toEqual([
      expect.objectContaining({ kind: 'worker', target: id, action: 'stop', done: expect.any(String) }),
    ]);
    expect(after.workers).toEqual([]);
    // the writer's stage was handed back: its wake-up waits in the claude lane again
    expect(after.lanes.find((lane) => lane.lane === 'claude')).toMatchObject({ backlog: 1, active: 0 });
    expect(lastStatus(dir, task)).not.toBe('task_completed');

    // no live worker with that id (any more): not found, exit 3
    const again = await troupe(dir, ['worker', 'drain', id], { TROUPE_QUEUE: db.url });
    expect([again.code, again.stderr.split('\n')[0]]).toEqual([
      3,
      `troupe: no live worker ${id} on this queue`,
    ]);
  }, 90_000);

  it('`worker drain <id>`: the worker takes no more work and exits 0; its lever says it was obeyed', async () => {
    await using db = await testDatabase();
    const dir = project();
    const worker = await startWorker(dir, db.url, ['--runtimes', 'claude']);
    const id = await workerId(db, worker.pid);
    const drain = await troupe(dir, ['worker', 'drain', id], { TROUPE_QUEUE: db.url });
    expect([drain.code, drain.stderr]).toEqual([0, '']);
    expect((await worker.child).exitCode).toBe(0);
    expect(worker.stderr()).toContain('stopping (asked by `troupe worker drain`)');
    expect((await overview(dir, db.url)).levers).toEqual([
      expect.objectContaining({ target: id, action: 'drain', done: expect.any(String) }),
    ]);
  }, 60_000);

  it('a paused lane keeps its wake-ups until it is resumed', async () => {
    await using db = await testDatabase();
    const dir = project({
      'p.yaml': 'agents:\n  - id: writer\n    runtime: claude\n',
      's.yaml': 'agents:\n  writer: ["draft"]\n',
    });
    const pause = await troupe(dir, ['queue', 'pause', 'claude'], { TROUPE_QUEUE: db.url });
    expect([pause.code, pause.stdout]).toEqual([0, 'claude: paused']);
    // the worker reads the paused lanes before it takes anything
    const worker = await startWorker(dir, db.url, ['--runtimes', 'claude']);
    const task = await detach(dir, db.url, ['go', '--file', 'p.yaml', '--script', 's.yaml']);
    const waiting = await waitFor(async () => {
      const lane = (await overview(dir, db.url)).lanes.find((l) => l.lane === 'claude');
      return lane && lane.due === 1 ? lane : undefined;
    }, 30_000);
    expect(waiting).toMatchObject({ paused: true, backlog: 1, active: 0 });
    expect(waiting.oldestWaitSeconds).toBeGreaterThanOrEqual(0);
    expect((await troupe(dir, ['queue'], { TROUPE_QUEUE: db.url })).stdout).toContain(
      'claude (paused): backlog 1 (1 due, oldest waiting ',
    );
    expect(eventLog(dir, task).filter((e) => e.type === 'stage_started')).toEqual([]);

    const resume = await troupe(dir, ['queue', 'resume', 'claude'], { TROUPE_QUEUE: db.url });
    expect([resume.code, resume.stdout]).toEqual([0, 'claude: not paused']);
    await waitFor(() => (lastStatus(dir, task) === 'task_completed' ? true : undefined), 30_000);
    expect((await overview(dir, db.url)).lanes.find((l) => l.lane === 'claude')?.paused).toBe(false);
    expect(await worker.stop()).toBe(0);

    const bad = await troupe(dir, ['queue', 'pause', 'Claude!'], { TROUPE_QUEUE: db.url });
    expect([bad.code, bad.stderr.split('\n')[0]]).toEqual([2, 'troupe: `Claude!` is not a lane']);
  }, 60_000);

  it('gone workers expire after a day; `workers --prune` removes every gone one now', async () => {
    await using db = await testDatabase();
    const dir = project();
    const worker = await startWorker(dir, db.url, ['--runtimes', 'claude']);
    const id = await workerId(db, worker.pid);
    const add = (name: string, ago: string) =>
      db.query(
        `INSERT INTO troupe_workers (id, host, pid, runtimes, labels, tasks, started, last_seen)
         VALUES ($1, 'h', 1, '{claude}', '{}', '{}', now() - interval '${ago}', now() - interval '${ago}')`,
        [name],
      );
    await add('old-1', '25 hours');
    await add('recent-1', '2 minutes');
    const ids = async (args: string[] = []) =>
      JSON.parse((await troupe(dir, ['workers', '--json', ...args], { TROUPE_QUEUE: db.url })).stdout).map(
        (w: { id: string; gone: boolean }) => [w.id, w.gone],
      );
    // the day-old row is deleted by `troupe workers` (and by any worker's heartbeat); the recent one is gone, kept
    expect((await ids()).sort()).toEqual(
      [
        [id, false],
        ['recent-1', true],
      ].sort(),
    );
    const pruned = await troupe(dir, ['workers', '--prune'], { TROUPE_QUEUE: db.url });
    expect(pruned.stdout).toContain('pruned 1 gone worker');
    expect(await ids()).toEqual([[id, false]]);
    await add('old-2', '25 hours');
    // the worker's heartbeat (every 5 s) expires it too
    await waitFor(async () => {
      const rows = await db.query("SELECT 1 FROM troupe_workers WHERE id = 'old-2'");
      return rows.length === 0 ? true : undefined;
    }, 20_000);
    expect(await worker.stop()).toBe(0);
  }, 60_000);

  it('a takeover from a SIGKILLed worker is counted: in its row of `troupe workers`, and in the totals of `troupe queue`', async () => {
    await using db = await testDatabase();
    const dir = project({
      'p.yaml': chain.replace('runtime: codex', 'runtime: claude'),
      's.yaml': 'agents:\n  writer: [{reply: "draft", delay_ms: 4000}]\n  editor: ["edited"]\n',
    });
    const doomed = await startWorker(dir, db.url, ['--runtimes', 'claude']);
    const doomedId = await workerId(db, doomed.pid);
    const task = await detach(dir, db.url, ['go', '--file', 'p.yaml', '--script', 's.yaml']);
    await waitFor(
      () => (eventLog(dir, task).some((e) => e.type === 'stage_started') ? true : undefined),
      20_000,
    );
    doomed.child.kill('SIGKILL');
    await doomed.child;
    const survivor = await startWorker(dir, db.url, ['--runtimes', 'claude']);
    const id = await workerId(db, survivor.pid);
    await waitFor(() => (lastStatus(dir, task) === 'task_completed' ? true : undefined), 30_000);
    // the counts reach the row with the next heartbeat (5 s)
    const rows = await waitFor(async () => {
      const run = await troupe(dir, ['workers', '--json'], { TROUPE_QUEUE: db.url });
      const workers: Worker[] = JSON.parse(run.stdout);
      return workers.find((w) => w.id === id)?.stages === 2 ? workers : undefined;
    }, 30_000);
    const counts = (w: Worker) => [w.id, w.stages, w.takeovers, w.leaseLosses, w.wakeFailures];
    expect(rows.map(counts)).toEqual([
      [doomedId, 0, 0, 0, 0],
      [id, 2, 1, 0, 0],
    ]);
    expect((await overview(dir, db.url)).totals).toEqual({
      stages: 2,
      takeovers: 1,
      leaseLosses: 0,
      wakeFailures: 0,
    });
    const text = await troupe(dir, ['queue'], { TROUPE_QUEUE: db.url });
    expect(text.stdout).toContain(
      'takeovers 1, lease losses 0, wake-up failures 0, stages run 2 (by the 2 workers listed)',
    );
    const listed = await troupe(dir, ['workers'], { TROUPE_QUEUE: db.url });
    expect(listed.stdout).toContain('stages 2, takeovers 1, lease losses 0, wake-up failures 0');
    expect(await survivor.stop()).toBe(0);
  }, 90_000);

  it("metrics in Prometheus text: a worker's counters on --metrics-port, the queue's gauges on serve's /metrics behind its token", async () => {
    await using db = await testDatabase();
    const dir = project({
      'quick.yaml': 'agents:\n  - id: quick\n    runtime: claude\n',
      'slow.yaml': 'agents:\n  - id: slow\n    runtime: claude\n',
      'q.yaml': 'agents:\n  quick: ["done"]\n',
      's.yaml': 'agents:\n  slow: [{reply: "late", delay_ms: 600000}]\n',
    });
    const worker = await startWorker(dir, db.url, ['--runtimes', 'claude', '--metrics-port', '0']);
    const id = await workerId(db, worker.pid);
    const scrapeUrl = /metrics at (http:\/\/\S+)/.exec(worker.stderr())![1]!;
    const quick = await detach(dir, db.url, ['go', '--file', 'quick.yaml', '--script', 'q.yaml']);
    await waitFor(() => (lastStatus(dir, quick) === 'task_completed' ? true : undefined), 30_000);
    const counters = parse(await (await fetch(scrapeUrl)).text());
    expect(counters.get(`troupe_worker_stages_run_total{worker="${id}"}`)).toBe(1);
    expect(counters.get(`troupe_worker_lease_losses_total{worker="${id}"}`)).toBe(0);
    expect(counters.get(`troupe_worker_wakeup_failures_total{worker="${id}"}`)).toBe(0);
    expect(counters.has(`troupe_worker_takeovers_total{worker="${id}"}`)).toBe(true);

    const slow = await detach(dir, db.url, ['go', '--file', 'slow.yaml', '--script', 's.yaml']);
    await waitFor(async () => {
      const seen = await overview(dir, db.url);
      return seen.active.find((job) => job.taskId === slow && job.holder === id) ? true : undefined;
    }, 30_000);
    const served = await serve(dir, ['--token', 'scrape-me-with-this-token'], { TROUPE_QUEUE: db.url });
    try {
      expect((await fetch(`${served.url}metrics`)).status).toBe(401);
      const answer = await fetch(`${served.url}metrics`, {
        headers: { Authorization: 'Bearer scrape-me-with-this-token' },
      });
      expect(answer.headers.get('content-type')).toContain('text/plain; version=0.0.4');
      const gauges = parse(await answer.text());
      expect(gauges.get('troupe_queue_active_jobs{lane="claude"}')).toBe(1);
      expect(gauges.get('troupe_queue_backlog{lane="claude"}')).toBe(0);
      expect(gauges.get('troupe_queue_paused{lane="claude"}')).toBe(0);
      expect(gauges.get('troupe_queue_active_unheld')).toBe(0);
      expect(gauges.get('troupe_workers{state="running"}')).toBe(1);
      expect(gauges.get('troupe_workers{state="gone"}')).toBe(0);
      expect(gauges.get('troupe_dead_letters')).toBe(0);
      expect(gauges.get('troupe_tasks{status="completed"}')).toBe(1);
      expect(gauges.get('troupe_tasks{status="running"}')).toBe(1);
    } finally {
      await served.stop();
    }
    await troupe(dir, ['worker', 'stop', id], { TROUPE_QUEUE: db.url });
    expect((await worker.child).exitCode).toBe(0);
  }, 90_000);

  it('D8: while its database refuses it, a worker writes its errors with a backoff, saying how many it held back', async () => {
    await using db = await testDatabase();
    const dir = project();
    const worker = await startWorker(dir, db.url, ['--runtimes', 'claude']);
    const name = new URL(db.url).pathname.slice(1);
    const admin = new pg.Client('postgres://postgres@127.0.0.1:5432/postgres');
    await admin.connect();
    try {
      // the database goes away for the worker (its sessions ended, no new ones let in)
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'troupe'",
        [name],
      );
      const held = () =>
        [...worker.stderr().matchAll(/\((\d+) more\)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
      // without the backoff every failed poll (2 a second) wrote its line, and none said "(N more)"
      await waitFor(() => (held() >= 20 ? true : undefined), 60_000);
      const lines = worker
        .stderr()
        .split('\n')
        .filter((line) => /^troupe worker: (queue|cannot register): /.test(line));
      expect(lines.length).toBeLessThan(held());
    } finally {
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      await admin.end();
    }
    expect(await worker.stop()).toBe(0);
  }, 90_000);
});

/** Prometheus text format: each sample `name{labels} value`, by its name and labels. */
function parse(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}
