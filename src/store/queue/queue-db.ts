import type PgBoss from 'pg-boss';
import { createSchemaSql, type QueueLocation, queueLocation } from './queue-namespace.js';

/**
 * Runs `use` on a connection of its own to the queue at `url`, without starting pg-boss (which
 * would install its schema in a database that has none): what the read-only commands and the
 * dashboard use.
 */
export async function withQueueDb<T>(
  url: string,
  use: (db: PgBoss.Db, location: QueueLocation) => Promise<T>,
): Promise<T> {
  const location = queueLocation(url);
  const { default: pg } = await import('pg');
  const client = new pg.Client({
    connectionString: location.url,
    application_name: 'troupe',
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  try {
    return await use({ executeSql: (text, values) => client.query(text, values) }, location);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Creates a troupe table of the queue (and its namespace's schema) unless it exists: `ddl` are
 * idempotent statements (`CREATE TABLE IF NOT EXISTS`, `ADD COLUMN IF NOT EXISTS`). Processes
 * that start together race: PostgreSQL refuses the loser's concurrent `CREATE` (a duplicate key
 * in its catalog), so the loser tries the whole list again once the winner's is in, rather than
 * going on with its later statements skipped (a worker whose columns were not there yet could not
 * register, and its calls escaped the shared `limits:`).
 */
export async function ensureQueueTable(db: PgBoss.Db, schema: string | null, ddl: string[]): Promise<void> {
  const statements = [createSchemaSql(schema), ...ddl].filter((sql): sql is string => Boolean(sql));
  for (let attempt = 1; ; attempt++) {
    try {
      for (const statement of statements) await db.executeSql(statement, []);
      return;
    } catch (error) {
      if (attempt >= DDL_ATTEMPTS || !isCreateRace(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

const DDL_ATTEMPTS = 8;

function isCreateRace(error: unknown): boolean {
  return /already exists|duplicate key/.test((error as Error).message);
}
