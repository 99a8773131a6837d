// `troupe worker` processes on a PostgreSQL database of the bench's own, for bench/workers.js:
// the database made and dropped, workers started and stopped (SIGTERM, then SIGKILL), their stderr kept.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const BIN = fileURLToPath(new URL('../bin/troupe.js', import.meta.url));
const SERVER = process.env.TROUPE_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function admin(sql) {
  const client = new pg.Client({ connectionString: SERVER });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

/** A fresh database on the local server; `drop()` removes it, connections and all. */
export async function benchDatabase(name) {
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  const client = new pg.Client({ connectionString: url.href });
  await client.connect();
  const [{ server_version: version }] = (await client.query('SHOW server_version')).rows;
  return {
    url: url.href,
    version,
    query: async (sql, values = []) => (await client.query(sql, values)).rows,
    async drop() {
      await client.end().catch(() => {});
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** CPU time (user + system) a live process has used, in ms (Linux /proc). */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // the fields after the command name, which is in parentheses and may hold spaces
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in ticks of 1/100 s
}

/**
 * `troupe worker …args` in `cwd`, resolved once it says it is ready. Every worker started is in
 * `live` until it has exited, so the bench can stop them all whatever happened.
 */
export function startWorker(cwd, args, env, live) {
  const child = spawn(process.execPath, [BIN, 'worker', ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const worker = { child, pid: child.pid, args, stderr: '', exited: null };
  live.add(worker);
  worker.exit = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      worker.exited = { code, signal };
      live.delete(worker);
      resolve(worker.exited);
    });
  });
  child.stderr.on('data', (chunk) => {
    worker.stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    const timeout = setTimeout(() => fail('not ready after 30 s'), 30_000);
    const fail = (why) => {
      clearTimeout(timeout);
      reject(new Error(`troupe worker ${args.join(' ')} ${why}:\n${worker.stderr}`));
    };
    child.stderr.on('data', () => {
      if (/ ready \(/.test(worker.stderr)) {
        clearTimeout(timeout);
        resolve(worker);
      }
    });
    worker.exit.then(({ code, signal }) => fail(`exited (${signal ?? code})`));
  });
}

/** SIGTERM, and SIGKILL if it has not exited within `graceMs`; resolves with how it exited. */
export async function stopWorker(worker, graceMs = 15_000) {
  if (worker.exited) return worker.exited;
  worker.child.kill('SIGTERM');
  const timer = setTimeout(() => worker.child.kill('SIGKILL'), graceMs);
  const exited = await worker.exit;
  clearTimeout(timer);
  return exited;
}
