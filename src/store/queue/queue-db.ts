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
 * idempotent statements (`CREATE TABLE IF NOT EXISTS`, `ADD COLUMN IF NOT EXISTS`).
 */
export async function ensureQueueTable(db: PgBoss.Db, schema: string | null, ddl: string[]): Promise<void> {
  try {
    const createSchema = createSchemaSql(schema);
    if (createSchema) await db.executeSql(createSchema, []);
    for (const statement of ddl) await db.executeSql(statement, []);
  } catch (error) {
    // two processes creating it at once: one wins, the other sees it next time
    if (!/already exists|duplicate key/.test((error as Error).message)) throw error;
  }
}
