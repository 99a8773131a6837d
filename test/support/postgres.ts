import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The PostgreSQL the tests use (CI starts it: .ci/run); each test takes a schema of its own. */
export const PG_URL = process.env.TROUPE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Why PostgreSQL cannot be used here, or null when it can. */
export async function postgresUnreachable(): Promise<string | null> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return null;
  } catch (error) {
    return `PostgreSQL at ${PG_URL} is unreachable (${(error as Error).message})`;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A new schema name, unique to this run, so parallel runs and reruns never meet. */
export function scratchSchemaName(): string {
  return `troupe_test_${process.pid}_${randomBytes(4).toString('hex')}`;
}

/** Drops the schemas (and everything in them). */
export async function dropSchemas(names: Iterable<string>): Promise<void> {
  const list = [...names];
  if (!list.length) return;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    for (const name of list) await client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
  } finally {
    await client.end();
  }
}

/**
 * Ends the sessions of `applicationName` (as a server restart would), and waits until they are
 * gone: the signal is sent before they end, and a client that sent a statement in between would
 * see the connection break under it, which no client can answer safely.
 */
export async function endSessions(applicationName: string): Promise<number> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
      [applicationName],
    );
    const pids = rows.map((row) => row.pid);
    await client.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [pids]);
    for (let i = 0; i < 400; i++) {
      const left = await client.query('SELECT 1 FROM pg_stat_activity WHERE pid = ANY($1)', [pids]);
      // a backend leaves pg_stat_activity just before it closes its socket: a moment more for that
      if (left.rowCount === 0) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return pids.length;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`the sessions ${applicationName} did not end`);
  } finally {
    await client.end();
  }
}
