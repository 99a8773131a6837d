import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { dropSchemas, PG_URL, postgresUnreachable, scratchSchemaName } from './support/postgres.js';
import { startWorker, testDatabase } from './support/queue-db.js';
import { bin, eventLog, project, troupe, waitFor } from './support/troupe.js';

/**
 * D6 of the distributed review (2h): a troupe in another PID namespace under the same hostname
 * (a container on host networking) holds a task; a troupe on the host must not judge it dead
 * because its pid means nothing here, and take its live lease mid-stage.
 */

/** Why this machine cannot make a PID namespace, or null when it can. */
function noPidNamespaces(): string | null {
  if (process.platform !== 'linux') return 'PID namespaces are Linux only';
  const probe = spawnSync('unshare', ['-p', '-f', '--mount-proc', 'true']);
  if (probe.error) return `unshare is not available (${probe.error.message})`;
  if (probe.status !== 0) return `unshare -p refused: ${String(probe.stderr).trim()}`;
  return null;
}

const cannot = noPidNamespaces();
const pgUnreachable = await postgresUnreachable();

const schemas = new Set<string>();
afterAll(() => dropSchemas(schemas));
const stops: Array<() => unknown> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** Stage 1 notes each run and waits for the `release` file; stage 2 is quick. */
const pipeline = `agents:
  - id: slow
    runtime: command
    command: [sh, -c, "echo run >> runs.txt; while [ ! -e release ]; do sleep 0.1; done"]
    handoffs: [{ to: quick }]
  - id: quick
    runtime: command
    command: [echo, done]
`;

/** A pid free on this host (the namespace's troupe gets it there, so here it names no process). */
function pidFreeHere(): number {
  const max = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'));
  for (let pid = max - 10; pid > max - 5000; pid--) if (!existsSync(`/proc/${pid}`)) return pid;
  throw new Error('no free pid near pid_max');
}

/** `troupe run` inside a new PID namespace (same hostname), with the pid `pid` there. */
function runInNamespace(dir: string, env: Record<string, string>, pid: number): ResultPromise {
  // the namespace's next pid is set through its own /proc; `& wait` makes sh fork rather than exec
  const script = `echo ${pid - 1} > /proc/sys/kernel/ns_last_pid; node ${JSON.stringify(bin)} run go --file p.yaml & wait`;
  const child = execa('unshare', ['-p', '-f', '--mount-proc', 'sh', '-c', script], {
    cwd: dir,
    reject: false,
    env: { NO_COLOR: '1', ...env },
    stdin: 'ignore',
    detached: true,
  });
  stops.push(async () => {
    writeFileSync(join(dir, 'release'), '');
    await Promise.race([child, new Promise((resolve) => setTimeout(resolve, 15_000))]);
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {}
  });
  return child;
}

const runs = (dir: string) =>
  existsSync(join(dir, 'runs.txt'))
    ? readFileSync(join(dir, 'runs.txt'), 'utf8').split('\n').filter(Boolean).length
    : 0;

describe.skipIf(cannot)(
  `a lease held from another PID namespace on this host${cannot ? `: ${cannot}` : ''}`,
  () => {
    const stores: Array<[string, () => Record<string, string>, string | null]> = [
      ['SQLite', () => ({}), null],
      [
        'PostgreSQL',
        () => {
          const schema = scratchSchemaName();
          schemas.add(schema);
          const url = new URL(PG_URL);
          url.searchParams.set('schema', schema);
          return { TROUPE_STORE: url.toString() };
        },
        pgUnreachable,
      ],
    ];

    for (const [name, storeEnv, unavailable] of stores)
      it.skipIf(unavailable)(
        `is not taken over while its holder runs (${name})${unavailable ? `: ${unavailable}` : ''}`,
        async () => {
          const dir = project({ 'p.yaml': pipeline });
          const env = storeEnv();
          const pid = pidFreeHere();
          const holder = runInNamespace(dir, env, pid);
          await waitFor(() => (runs(dir) === 1 ? true : undefined), 30_000);
          const [task] = JSON.parse((await troupe(dir, ['list', '--json'], env)).stdout) as Array<{
            id: string;
          }>;
          const id = task!.id;
          // the holder's pid names no process on the host: the old rule (hostname, pid) judged it dead
          const status = JSON.parse((await troupe(dir, ['status', id, '--json'], env)).stdout) as {
            owner: { pid: number; alive: boolean };
          };
          expect(status.owner.pid).toBe(pid);
          expect(existsSync(`/proc/${pid}`)).toBe(false);

          // an operator on the host resumes it: refused, the stage is not run a second time
          const resume = execa('node', [bin, 'resume', id], {
            cwd: dir,
            reject: false,
            env: { NO_COLOR: '1', ...env },
            stdin: 'ignore',
          });
          stops.push(() => resume.kill('SIGKILL'));
          const outcome = await Promise.race([
            resume.then((r) => ({ code: r.exitCode, stderr: String(r.stderr) })),
            waitFor(
              () => (runs(dir) > 1 ? { code: null, stderr: 'the stage ran again on the host' } : undefined),
              60_000,
            ),
          ]);
          expect(outcome.stderr).toMatch(new RegExp(`task ${id} is being run by process ${pid} on `));
          expect(outcome.code).toBe(1);
          expect(runs(dir)).toBe(1);
          expect(status.owner.alive).toBe(true);

          // the holder goes on and finishes its task
          writeFileSync(join(dir, 'release'), '');
          const done = await holder;
          expect(done.exitCode).toBe(0);
          const end = JSON.parse((await troupe(dir, ['status', id, '--json'], env)).stdout) as {
            status: string;
          };
          expect(end.status).toBe('completed');
          expect(runs(dir)).toBe(1);
        },
        120_000,
      );

    it.skipIf(pgUnreachable)(
      "the review's 2h: a free worker in another namespace does not take a busy worker's live task on resume --detach",
      async () => {
        await using db = await testDatabase();
        const dir = project({ 'p.yaml': pipeline });
        const queue = { TROUPE_QUEUE: db.url };
        // worker A on the host, busy with the task's long stage (concurrency 1)
        const a = await startWorker(dir, db.url, ['--concurrency', '1']);
        stops.push(() => a.stop());
        const submitted = await troupe(dir, ['run', 'go', '--file', 'p.yaml', '--detach'], queue);
        expect(submitted.code, submitted.stderr).toBe(0);
        const id = submitted.stdout.trim();
        await waitFor(() => (runs(dir) === 1 ? true : undefined), 30_000);
        // worker B, free, in a PID namespace of its own under the same hostname: A's pid means nothing there
        const b = await startWorker(dir, db.url, ['--concurrency', '1'], {}, [
          'unshare',
          '-p',
          '--mount-proc',
          '--kill-child=SIGTERM',
        ]);
        stops.push(() => b.stop());
        const jobs = async () =>
          db.query<{ state: string }>(
            "SELECT state FROM pgboss.job WHERE data->>'taskId' = $1 AND name <> 'troupe-check' ORDER BY created_on",
            [id],
          );
        const before = (await jobs()).length;
        const resumed = await troupe(dir, ['resume', id, '--detach'], queue);
        expect(resumed.code, resumed.stderr).toBe(0);
        // the wake-up goes to B (A is busy): done with once B found the task held, unless B ran the stage again
        await waitFor(async () => {
          if (runs(dir) > 1) return true;
          const after = await jobs();
          return after.length > before && after.slice(before).every((job) => job.state === 'completed')
            ? true
            : undefined;
        }, 60_000);
        expect(runs(dir)).toBe(1);
        expect(eventLog(dir, id).map((event) => event.type)).not.toContain('stage_interrupted');

        writeFileSync(join(dir, 'release'), '');
        await waitFor(
          () => (eventLog(dir, id).some((event) => event.type === 'task_completed') ? true : undefined),
          60_000,
        );
        expect(runs(dir)).toBe(1);
      },
      180_000,
    );
  },
);
