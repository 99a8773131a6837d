import type PgBoss from 'pg-boss';
import { createSchemaSql, queueLocation, queueTable } from './queue-namespace.js';

/**
 * The workers on a queue, in a table of the queue's database: each worker upserts its row every
 * few seconds (`last_seen`), so `troupe workers` can tell the live from the gone. The table is in
 * the project's namespace (queue-namespace.ts): a project sees its own workers only.
 */

/** A worker not seen for this long is gone. */
export const GONE_AFTER_MS = 30_000;

export interface WorkerInfo {
  id: string;
  host: string;
  pid: number;
  runtimes: string[];
  labels: string[];
  /** The tasks it is running. */
  tasks: string[];
  started: string;
  lastSeen: string;
}

export interface WorkerRow extends WorkerInfo {
  gone: boolean;
}

const createSql = (table: string) => `CREATE TABLE IF NOT EXISTS ${table} (
  id text PRIMARY KEY, host text NOT NULL, pid integer NOT NULL, runtimes text[] NOT NULL,
  labels text[] NOT NULL, tasks text[] NOT NULL, started timestamptz NOT NULL, last_seen timestamptz NOT NULL)`;

/** The workers on the queue at `url`, read with a connection of its own (without starting pg-boss). */
export async function readWorkers(url: string): Promise<WorkerRow[]> {
  const location = queueLocation(url);
  const { default: pg } = await import('pg');
  const client = new pg.Client({
    connectionString: location.url,
    application_name: 'troupe',
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  try {
    const db = { executeSql: (text: string, values?: unknown[]) => client.query(text, values) };
    return await new WorkerRegistry(db, location.schema).list();
  } finally {
    await client.end().catch(() => {});
  }
}

export class WorkerRegistry {
  private ready = false;
  private readonly name: string;

  /** `schema`: the project's namespace (null: the connection's default schema). */
  constructor(
    private readonly db: PgBoss.Db,
    private readonly schema: string | null,
  ) {
    this.name = queueTable(schema, 'troupe_workers');
  }

  private async table(): Promise<void> {
    if (this.ready) return;
    try {
      const createSchema = createSchemaSql(this.schema);
      if (createSchema) await this.db.executeSql(createSchema, []);
      await this.db.executeSql(createSql(this.name), []);
    } catch (error) {
      // two workers creating it at once: one wins, the other sees it next time
      if (!/already exists|duplicate key/.test((error as Error).message)) throw error;
    }
    this.ready = true;
  }

  async seen(worker: WorkerInfo): Promise<void> {
    await this.table();
    await this.db.executeSql(
      `INSERT INTO ${this.name} (id, host, pid, runtimes, labels, tasks, started, last_seen)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now())
       ON CONFLICT (id) DO UPDATE SET tasks = $6, last_seen = now()`,
      [worker.id, worker.host, worker.pid, worker.runtimes, worker.labels, worker.tasks, worker.started],
    );
  }

  async remove(id: string): Promise<void> {
    await this.table();
    await this.db.executeSql(`DELETE FROM ${this.name} WHERE id = $1`, [id]);
  }

  async list(): Promise<WorkerRow[]> {
    await this.table();
    const { rows } = await this.db.executeSql(
      `SELECT id, host, pid, runtimes, labels, tasks, started, last_seen,
              last_seen < now() - make_interval(secs => $1) AS gone
       FROM ${this.name} ORDER BY started`,
      [GONE_AFTER_MS / 1000],
    );
    return rows.map((r) => ({
      id: r.id,
      host: r.host,
      pid: r.pid,
      runtimes: r.runtimes,
      labels: r.labels,
      tasks: r.tasks,
      started: new Date(r.started).toISOString(),
      lastSeen: new Date(r.last_seen).toISOString(),
      gone: r.gone,
    }));
  }
}
