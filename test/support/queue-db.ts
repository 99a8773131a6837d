import { randomBytes } from 'node:crypto';
import { execa, type ResultPromise } from 'execa';
import pg from 'pg';
import { bin } from './troupe.js';

/** The PostgreSQL on this machine (trust auth); each test makes its own database on it. */
const ADMIN = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  query<T = Record<string, unknown>>(sql: string, values?: unknown[]): Promise<T[]>;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function testDatabase(): Promise<TestDatabase> {
  const name = `troupe_test_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client(ADMIN);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = `postgres://postgres@127.0.0.1:5432/${name}`;
  const client = new pg.Client(url);
  await client.connect();
  return {
    url,
    async query<T>(sql: string, values: unknown[] = []) {
      return (await client.query(sql, values)).rows as T[];
    },
    async [Symbol.asyncDispose]() {
      await client.end();
      const drop = new pg.Client(ADMIN);
      await drop.connect();
      await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await drop.end();
    },
  };
}

export interface WorkerProcess {
  child: ResultPromise;
  pid: number;
  stderr(): string;
  /** SIGTERM, and its exit code. */
  stop(): Promise<number>;
}

/**
 * Starts `troupe worker` in `dir` and waits until it says it is ready; `via` runs it through
 * another command (`ip netns exec <ns>`: a worker on a network of its own).
 */
export async function startWorker(
  dir: string,
  queueUrl: string,
  args: string[] = [],
  env: Record<string, string> = {},
  via: string[] = [],
): Promise<WorkerProcess> {
  const [command, ...rest] = [...via, 'node', bin, 'worker', ...args];
  const child = execa(command!, rest, {
    cwd: dir,
    reject: false,
    stdin: 'ignore',
    env: { NO_COLOR: '1', TROUPE_QUEUE: queueUrl, TROUPE_LEASE_SECONDS: '1', ...env },
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const end = Date.now() + 20_000;
  while (!/ ready \(/.test(stderr)) {
    if (child.exitCode !== null || Date.now() > end) throw new Error(`worker did not start:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    child,
    pid: child.pid!,
    stderr: () => stderr,
    async stop() {
      child.kill('SIGTERM');
      return (await child).exitCode ?? -1;
    },
  };
}
