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
