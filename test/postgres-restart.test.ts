import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker, type WorkerProcess } from './support/queue-db.js';
import { project, troupe, waitFor } from './support/troupe.js';

/**
 * A PostgreSQL restart in the middle of a run (docs/distributed.md, "Failures"). The shared server
 * on 5432 serves other test files, so this one starts a private server of its own and restarts that.
 */

const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort() : [];
const binDir = versions.length > 0 ? join('/usr/lib/postgresql', versions.at(-1)!, 'bin') : '';
const missing = binDir === '' || !existsSync(join(binDir, 'initdb')) || !existsSync(join(binDir, 'pg_ctl'));
// initdb refuses to run as root: the server then belongs to the postgres OS user
const asRoot = process.getuid?.() === 0;

let base = '';
let port = 0;

function pgCtl(args: string[]) {
  const command = [join(binDir, 'pg_ctl'), ...args];
  return asRoot
    ? execa('runuser', ['-u', 'postgres', '--', ...command])
    : execa(command[0]!, command.slice(1));
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: free } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return free;
}

const url = () => `postgres://postgres@127.0.0.1:${port}/troupe_restart`;

/** One query on a fresh connection; undefined while the server is down. */
async function query<T>(sql: string, values: unknown[] = []): Promise<T[] | undefined> {
  const client = new pg.Client(url());
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.query(sql, values)).rows as T[];
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => {});
  }
}

beforeAll(async () => {
  if (missing) return;
  base = mkdtempSync(join(tmpdir(), 'troupe-pg-'));
  if (asRoot) {
    const { stdout } = await execa('id', ['-u', 'postgres']);
    const { stdout: gid } = await execa('id', ['-g', 'postgres']);
    chownSync(base, Number(stdout), Number(gid));
  }
  const data = join(base, 'data');
  const initdb = [join(binDir, 'initdb'), '-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8'];
  await (asRoot ? execa('runuser', ['-u', 'postgres', '--', ...initdb]) : execa(initdb[0]!, initdb.slice(1)));
  port = await freePort();
  await pgCtl([
    'start',
    '-w',
    '-D',
    data,
    '-l',
    join(base, 'server.log'),
    '-o',
    `-p ${port} -k ${base} -c listen_addresses=127.0.0.1`,
  ]);
  const admin = new pg.Client(`postgres://postgres@127.0.0.1:${port}/postgres`);
  await admin.connect();
  await admin.query('CREATE DATABASE troupe_restart');
  await admin.end();
}, 60_000);

afterAll(async () => {
  if (base === '') return;
  await pgCtl(['stop', '-m', 'immediate', '-D', join(base, 'data')]).catch(() => {});
  rmSync(base, { recursive: true, force: true });
});

describe.skipIf(missing)('a PostgreSQL restart mid-run', () => {
  it('is survived: workers reconnect and carry on; every task completes, each stage once', async () => {
    const dir = project({
      'p.yaml':
        'agents:\n  - id: writer\n    runtime: claude\n    handoffs: [{to: editor}]\n  - id: editor\n    runtime: claude\n',
      's.yaml':
        'agents:\n  writer: [{reply: "draft", delay_ms: 800}]\n  editor: [{reply: "edited", delay_ms: 800}]\n',
    });
    // the store and the queue both on the private server
    const env = { TROUPE_STORE: url(), TROUPE_QUEUE: '' };
    const workers: WorkerProcess[] = [];
    try {
      for (const _ of [1, 2]) workers.push(await startWorker(dir, '', ['--runtimes', 'claude'], env));
      const ids: string[] = [];
      for (let i = 1; i <= 10; i++) {
        const run = await troupe(
          dir,
          ['run', `t${i}`, '--file', 'p.yaml', '--script', 's.yaml', '--detach'],
          env,
        );
        expect([run.code, run.stderr]).toEqual([0, '']);
        ids.push(run.stdout.trim());
      }
      const counted = () =>
        query<{ task_id: string; type: string; data: string }>(
          "SELECT task_id, type, data FROM events WHERE type IN ('stage_completed', 'task_completed')",
        );
      // some work is done, most is not: restart now
      await waitFor(async () => {
        const rows = await counted();
        return rows?.some((r) => r.type === 'stage_completed') ? true : undefined;
      }, 30_000);
      const before = (await counted())!.filter((r) => r.type === 'task_completed').length;
      expect(before).toBeLessThan(ids.length);
      // -l again: without it the restarted server writes to pg_ctl's stdout, and holds it open
      await pgCtl(['restart', '-w', '-m', 'fast', '-D', join(base, 'data'), '-l', join(base, 'server.log')]);

      const rows = await waitFor(async () => {
        const all = await counted();
        const done = new Set(all?.filter((r) => r.type === 'task_completed').map((r) => r.task_id));
        return ids.every((id) => done.has(id)) ? all : undefined;
      }, 90_000).catch(async (error: Error) => {
        const rows = await counted();
        throw new Error(
          `${error.message}; ${rows?.filter((r) => r.type === 'task_completed').length} of ${ids.length} done\n${workers.map((w) => w.stderr()).join('\n---\n')}`,
        );
      });
      for (const id of ids) {
        const stages = rows
          .filter((r) => r.task_id === id && r.type === 'stage_completed')
          .map((r) => (JSON.parse(r.data) as { stage: number }).stage)
          .sort();
        expect(stages, id).toEqual([1, 2]);
      }
      for (const w of workers) expect(w.child.exitCode, w.stderr()).toBeNull();
      expect(await Promise.all(workers.map((w) => w.stop()))).toEqual([0, 0]);
    } finally {
      for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    }
  }, 180_000);
});
