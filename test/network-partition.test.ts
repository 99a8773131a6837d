import { execFileSync } from 'node:child_process';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type TestDatabase, testDatabase, type WorkerProcess } from './support/queue-db.js';
import { project, troupe, waitFor } from './support/troupe.js';

/**
 * A worker cut off from the database (docs/distributed.md, "Failures"): it runs in a network
 * namespace of its own, joined to this one by a veth pair, and reaches PostgreSQL through a
 * forwarder on the host's end of the pair. Dropping that link cuts it off mid-stage, with no reset
 * on its connections (as a cable pulled or a partition does); bringing it back lets its stalled
 * connections carry on. Needs root and iproute2 (`ip netns`), as on CI.
 */

const tag = String(process.pid % 100_000);
const ns = `trp${tag}`;
const hostEnd = `vh${tag}`;
const nsEnd = `vn${tag}`;
// a /30 of its own per run (10.213.a.b), so parallel runs on one machine do not meet
const subnet = `10.213.${Math.floor(process.pid / 64) % 256}.${(process.pid % 64) * 4}`;
const [hostIp, nsIp] = [1, 2].map((n) => subnet.replace(/\d+$/, (last) => String(Number(last) + n)));

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

function unavailable(): string | null {
  if (process.getuid?.() !== 0) return 'needs root for a network namespace';
  try {
    ip('netns', 'add', ns);
    return null;
  } catch (error) {
    return `cannot make a network namespace: ${(error as Error).message.split('\n')[0]}`;
  }
}
const skip = unavailable();

let forwarder: Server | null = null;
const sockets = new Set<Socket>();
let forwardPort = 0;

beforeAll(async () => {
  if (skip) return;
  ip('link', 'add', hostEnd, 'type', 'veth', 'peer', 'name', nsEnd);
  ip('link', 'set', nsEnd, 'netns', ns);
  ip('addr', 'add', `${hostIp}/30`, 'dev', hostEnd);
  ip('link', 'set', hostEnd, 'up');
  ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${nsIp}/30`, 'dev', nsEnd);
  ip('netns', 'exec', ns, 'ip', 'link', 'set', nsEnd, 'up');
  ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
  // PostgreSQL listens on 127.0.0.1 only: the namespace reaches it through this forwarder
  forwarder = createServer((client) => {
    const server = createConnection({ host: '127.0.0.1', port: 5432 });
    for (const socket of [client, server]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        server.destroy();
      });
    }
    client.pipe(server).pipe(client);
  });
  await new Promise<void>((resolve) => forwarder!.listen(0, hostIp, resolve));
  forwardPort = (forwarder.address() as { port: number }).port;
});

afterAll(async () => {
  if (skip) return;
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => (forwarder ? forwarder.close(resolve) : resolve(null)));
  // the namespace takes its end of the pair with it, and the pair goes as a whole
  try {
    ip('netns', 'del', ns);
  } catch {}
});

/** The task's events, straight from the database. */
async function events(db: TestDatabase, taskId: string) {
  const rows = await db.query<{ seq: number; type: string; at: string; data: string }>(
    'SELECT seq, type, at, data FROM events WHERE task_id = $1 ORDER BY seq',
    [taskId],
  );
  return rows.map((row) => ({
    ...row,
    seq: Number(row.seq), // bigint, which pg hands over as text
    data: JSON.parse(row.data) as Record<string, unknown>,
  }));
}

/** A project whose writer (stage 1) takes `delayMs`, then hands off to the editor. */
const writerEditor = (delayMs: number) =>
  project({
    'p.yaml':
      'agents:\n  - id: writer\n    runtime: claude\n    handoffs: [{to: editor}]\n  - id: editor\n    runtime: claude\n',
    's.yaml': `agents:\n  writer: [{reply: "draft", delay_ms: ${delayMs}}]\n  editor: ["edited"]\n`,
  });

/** Waits until the task's first stage started. */
async function started(db: TestDatabase, taskId: string): Promise<void> {
  await waitFor(
    async () => ((await events(db, taskId)).some((e) => e.type === 'stage_started') ? true : undefined),
    20_000,
  );
}

/** Waits until `pid` resumed the task (took it over); the seq of its `task_resumed`. */
async function resumedBy(db: TestDatabase, taskId: string, pid: number): Promise<number> {
  return waitFor(
    async () => (await events(db, taskId)).find((e) => e.type === 'task_resumed' && e.data.pid === pid)?.seq,
    30_000,
  );
}

type Logged = Awaited<ReturnType<typeof events>>[number];

/**
 * Each stage completed once, and stage 1 by the run that took the task over: begun after the
 * takeover (`resumedAt`), it took its scripted `delayMs`. The cut-off worker's stage 1, begun
 * earlier, would end sooner after that restart: its output recorded would fail this.
 */
function expectTakenOver(log: Logged[], resumedAt: number, delayMs: number, trace: string): void {
  expect(
    log.filter((e) => e.type === 'stage_completed').map((e) => e.data.stage),
    trace,
  ).toEqual([1, 2]);
  const restarted = log.find((e) => e.type === 'stage_started' && e.seq > resumedAt);
  const completed = log.find((e) => e.type === 'stage_completed');
  expect(restarted?.data.stage, trace).toBe(1);
  // the scripted delay is a timer: never shorter (1 ms of slack for the clocks' rounding)
  expect(Date.parse(completed!.at) - Date.parse(restarted!.at), trace).toBeGreaterThanOrEqual(delayMs - 1);
}

const describeLog = (log: Logged[], resumedAt: number) =>
  `taken over at seq ${resumedAt}:\n${log.map((e) => `${e.seq} ${e.at} ${e.type} ${JSON.stringify(e.data).slice(0, 80)}`).join('\n')}`;

describe.skipIf(skip !== null)(`a worker cut off from the database${skip ? ` (${skip})` : ''}`, () => {
  it('loses its lease, its task goes on elsewhere, and once the link is back it records nothing more for it', async () => {
    await using db = await testDatabase();
    // long enough for the cut, the lease to expire (3 s) and the other worker to take over
    const dir = writerEditor(9000);
    // the same database from each side; short leases, so the test does not wait out 30 s
    const store = (host: string, port: number) =>
      `${db.url.replace('127.0.0.1:5432', `${host}:${port}`)}?lease_seconds=3`;
    const inside = { TROUPE_STORE: store(hostIp!, forwardPort), TROUPE_QUEUE: '' };
    const outside = { TROUPE_STORE: store('127.0.0.1', 5432), TROUPE_QUEUE: '' };
    const workers: WorkerProcess[] = [];
    const logs = () => workers.map((w) => `--- worker ${w.pid}\n${w.stderr()}`).join('\n');
    try {
      const cutOff = await startWorker(dir, '', ['--runtimes', 'claude'], inside, [
        'ip',
        'netns',
        'exec',
        ns,
      ]);
      workers.push(cutOff);
      const run = await troupe(
        dir,
        ['run', 'partition', '--file', 'p.yaml', '--script', 's.yaml', '--detach'],
        outside,
      );
      expect([run.code, run.stderr]).toEqual([0, '']);
      const taskId = run.stdout.trim();
      await started(db, taskId);

      ip('link', 'set', hostEnd, 'down');
      const cutAt = Date.now();
      const other = await startWorker(dir, '', ['--runtimes', 'claude'], outside);
      workers.push(other);
      // the lease expires unrenewed, and the other worker takes the task over
      const resumedAt = await resumedBy(db, taskId, other.pid).catch((error: Error) => {
        throw new Error(`${error.message}: no takeover\n${logs()}`);
      });
      ip('link', 'set', hostEnd, 'up');

      const done = await waitFor(async () => {
        const log = await events(db, taskId);
        return log.some((e) => e.type === 'task_completed') ? log : undefined;
      }, 60_000).catch((error: Error) => {
        throw new Error(`${error.message}: the task did not complete\n${logs()}`);
      });
      // the cut-off worker's stage ends (9 s after it began) with the link back: whatever it
      // then tries to write reaches the database, and is not recorded
      const stageEnds = cutAt + 9000 - Date.now();
      if (stageEnds > 0) await new Promise((resolve) => setTimeout(resolve, stageEnds + 2000));
      const log = await events(db, taskId);
      const trace = `${logs()}\n${describeLog(log, resumedAt)}`;
      expect(log.length, trace).toBe(done.length);
      expect(
        log.filter((e) => e.seq > resumedAt && e.type === 'task_resumed').map((e) => e.data.pid),
        trace,
      ).not.toContain(cutOff.pid);
      expectTakenOver(log, resumedAt, 9000, trace);
      // and the cut-off worker is still up, and stops cleanly
      expect(cutOff.child.exitCode, trace).toBeNull();
      expect(await Promise.all(workers.map((w) => w.stop()))).toEqual([0, 0]);
    } finally {
      for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
      try {
        ip('link', 'set', hostEnd, 'up');
      } catch {}
    }
  }, 150_000);
});

describe('a worker stalled past its lease', () => {
  // whichever tells it first, its own renewal or the database refusing its write, it records nothing
  it('comes back to find its task taken over, and records nothing more for it', async () => {
    await using db = await testDatabase();
    const dir = writerEditor(5000);
    const env = { TROUPE_STORE: `${db.url}?lease_seconds=3`, TROUPE_QUEUE: '' };
    const workers: WorkerProcess[] = [];
    const logs = () => workers.map((w) => `--- worker ${w.pid}\n${w.stderr()}`).join('\n');
    try {
      const stalled = await startWorker(dir, '', ['--runtimes', 'claude'], env);
      workers.push(stalled);
      const run = await troupe(
        dir,
        ['run', 'stall', '--file', 'p.yaml', '--script', 's.yaml', '--detach'],
        env,
      );
      const taskId = run.stdout.trim();
      await started(db, taskId);
      // stopped mid-stage (a long GC pause, a laptop lid, a VM migrated): it renews nothing
      stalled.child.kill('SIGSTOP');
      const other = await startWorker(dir, '', ['--runtimes', 'claude'], env);
      workers.push(other);
      const resumedAt = await resumedBy(db, taskId, other.pid);
      // its stage's time is long past: the stage ends at once, and its output is refused
      stalled.child.kill('SIGCONT');
      const log = await waitFor(async () => {
        const all = await events(db, taskId);
        return all.some((e) => e.type === 'task_completed') ? all : undefined;
      }, 30_000).catch((error: Error) => {
        throw new Error(`${error.message}: the task did not complete\n${logs()}`);
      });
      const trace = `${logs()}\n${describeLog(log, resumedAt)}`;
      expectTakenOver(log, resumedAt, 5000, trace);
      expect(stalled.child.exitCode, trace).toBeNull();
      // said as it is: nobody cancelled the task
      await waitFor(
        async () => (stalled.stderr().includes(`${taskId}: lease lost to `) ? true : undefined),
        20_000,
      );
      expect(stalled.stderr()).not.toMatch(/cancelled/);
      expect(await Promise.all(workers.map((w) => w.stop()))).toEqual([0, 0]);
    } finally {
      for (const w of workers) {
        w.child.kill('SIGCONT');
        if (w.child.exitCode === null) w.child.kill('SIGKILL');
      }
    }
  }, 120_000);
});
