import type PgBoss from 'pg-boss';
import { withQueueDb } from './queue-db.js';
import { createSchemaSql, queueTable } from './queue-namespace.js';

/**
 * Failed wake-ups counted per task, not per job, in a table of the queue's database
 * (`troupe_task_failures`, in the project's namespace like `troupe_workers`): a task's count
 * survives fresh wake-ups from the check lane and worker restarts. When it passes the queue's
 * retry limit the task is parked here, so it stops even when its own log refuses every write
 * (the log also gets `task_parked`, best effort). `troupe resume` clears the row.
 * See docs/distributed.md.
 */

export interface ParkedTask {
  taskId: string;
  /** The last failure's message. */
  reason: string;
  failures: number;
  at: string;
}

export interface FailureCount {
  failures: number;
  /** Set when this failure parked the task (or it was parked already). */
  parked: ParkedTask | null;
}

const createSql = (table: string) => `CREATE TABLE IF NOT EXISTS ${table} (
  task_id text PRIMARY KEY, failures integer NOT NULL, last_error text NOT NULL,
  parked_at timestamptz, updated_at timestamptz NOT NULL)`;

interface Row {
  task_id: string;
  failures: number;
  last_error: string;
  parked_at: Date | null;
}

function parkedOf(row: Row): ParkedTask | null {
  if (!row.parked_at) return null;
  return {
    taskId: row.task_id,
    reason: row.last_error,
    failures: row.failures,
    at: new Date(row.parked_at).toISOString(),
  };
}

/** The parked tasks on the queue at `url`, read with a connection of its own (without starting pg-boss). */
export function readParkedTasks(url: string): Promise<ParkedTask[]> {
  return withQueueDb(url, (db, location) => new TaskFailures(db, location.schema, 0).parked());
}

export class TaskFailures {
  private ready = false;
  private readonly name: string;

  /**
   * `retryLimit`: the queue's (TROUPE_QUEUE_RETRY_LIMIT): a task is parked at its
   * `retryLimit + 1`th failed wake-up, as one job is dead-lettered after its last retry.
   */
  constructor(
    private readonly db: PgBoss.Db,
    private readonly schema: string | null,
    private readonly retryLimit: number,
  ) {
    this.name = queueTable(schema, 'troupe_task_failures');
  }

  private async table(): Promise<void> {
    if (this.ready) return;
    try {
      const createSchema = createSchemaSql(this.schema);
      if (createSchema) await this.db.executeSql(createSchema, []);
      await this.db.executeSql(createSql(this.name), []);
    } catch (error) {
      // two processes creating it at once: one wins, the other sees it next time
      if (!/already exists|duplicate key/.test((error as Error).message)) throw error;
    }
    this.ready = true;
  }

  /** One more failed wake-up of the task; parks it when the count passes the retry limit. */
  async record(taskId: string, error: string): Promise<FailureCount> {
    await this.table();
    const { rows } = await this.db.executeSql(
      `INSERT INTO ${this.name} AS f (task_id, failures, last_error, parked_at, updated_at)
       VALUES ($1, 1, $2, CASE WHEN 1 > $3 THEN now() END, now())
       ON CONFLICT (task_id) DO UPDATE SET
         failures = f.failures + 1, last_error = $2, updated_at = now(),
         parked_at = coalesce(f.parked_at, CASE WHEN f.failures + 1 > $3 THEN now() END)
       RETURNING task_id, failures, last_error, parked_at`,
      [taskId, error, this.retryLimit],
    );
    const row = rows[0] as Row;
    return { failures: row.failures, parked: parkedOf(row) };
  }

  /** The task's parked mark, or null when it is not parked. */
  async parkedTask(taskId: string): Promise<ParkedTask | null> {
    await this.table();
    const { rows } = await this.db.executeSql(
      `SELECT task_id, failures, last_error, parked_at FROM ${this.name} WHERE task_id = $1`,
      [taskId],
    );
    return rows[0] ? parkedOf(rows[0] as Row) : null;
  }

  async parked(): Promise<ParkedTask[]> {
    await this.table();
    const { rows } = await this.db.executeSql(
      `SELECT task_id, failures, last_error, parked_at FROM ${this.name}
       WHERE parked_at IS NOT NULL ORDER BY parked_at`,
      [],
    );
    return (rows as Row[]).flatMap((row) => parkedOf(row) ?? []);
  }

  /** A person resumed the task: its count starts again from nothing; whether it was parked. */
  async clear(taskId: string): Promise<boolean> {
    await this.table();
    const { rows } = await this.db.executeSql(
      `DELETE FROM ${this.name} WHERE task_id = $1 RETURNING parked_at`,
      [taskId],
    );
    return rows.some((row: { parked_at: Date | null }) => row.parked_at !== null);
  }
}
