import type PgBoss from 'pg-boss';
import { ensureQueueTable, withQueueDb } from './queue-db.js';
import { QueueLevers } from './queue-levers.js';
import { queueTable } from './queue-namespace.js';

/**
 * The workers on a queue, in a table of the queue's database: each worker upserts its row every
 * few seconds (`last_seen`), so `troupe workers` can tell the live from the gone. The table is in
 * the project's namespace (queue-namespace.ts): a project sees its own workers only.
 */

/** A worker not seen for this long is gone. */
export const GONE_AFTER_MS = 30_000;

/**
 * A gone worker's row is deleted once it has not been seen for this long (24 h; the environment's
 * `TROUPE_WORKER_EXPIRY_HOURS` sets another): by any worker's heartbeat and by `troupe workers`.
 * `troupe workers --prune` deletes every gone row at once.
 */
export function workerExpirySeconds(): number {
  const hours = Number(process.env.TROUPE_WORKER_EXPIRY_HOURS);
  return (Number.isFinite(hours) && hours > 0 ? hours : 24) * 3600;
}

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
  /** The troupe it runs (src/cli/version.ts); null for a row written before workers said it. */
  version: string | null;
}

/**
 * What a worker has counted since it started (app/metrics.ts's WorkerTally), written on each
 * heartbeat; 0 in the row of a worker older than these columns.
 */
export interface WorkerCounts {
  /** Stages it ran to their end. */
  stages: number;
  /** Tasks it took over from a holder that never handed them back (died, cut off). */
  takeovers: number;
  /** Tasks whose lease it lost to another worker. */
  leaseLosses: number;
  /** Wake-ups that failed in it (retried, or dead). */
  wakeFailures: number;
}

export const NO_COUNTS: WorkerCounts = { stages: 0, takeovers: 0, leaseLosses: 0, wakeFailures: 0 };

export interface WorkerRow extends WorkerInfo, WorkerCounts {
  gone: boolean;
}

const COUNT_COLUMNS = ['stages', 'takeovers', 'lease_losses', 'wake_failures'] as const;

const ddl = (table: string) => [
  `CREATE TABLE IF NOT EXISTS ${table} (
  id text PRIMARY KEY, host text NOT NULL, pid integer NOT NULL, runtimes text[] NOT NULL,
  labels text[] NOT NULL, tasks text[] NOT NULL, started timestamptz NOT NULL, last_seen timestamptz NOT NULL)`,
  // added with the engine version: a table made by an older troupe gets it here
  `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS version text`,
  // added with the counts: an older worker's row reads 0
  ...COUNT_COLUMNS.map(
    (column) => `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS ${column} integer NOT NULL DEFAULT 0`,
  ),
];

/** The workers on the queue at `url`, read with a connection of its own (without starting pg-boss). */
export async function readWorkers(url: string): Promise<WorkerRow[]> {
  return withQueueDb(url, (db, location) => new WorkerRegistry(db, location.schema).list());
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
    await ensureQueueTable(this.db, this.schema, ddl(this.name));
    this.ready = true;
  }

  /** The worker's heartbeat; rows (and levers) of workers gone longer than the expiry go with it. */
  async seen(worker: WorkerInfo, counts: WorkerCounts = NO_COUNTS): Promise<void> {
    await this.table();
    await this.db.executeSql(
      `INSERT INTO ${this.name} (id, host, pid, runtimes, labels, tasks, started, last_seen, version,
         stages, takeovers, lease_losses, wake_failures)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now(), $8, $9, $10, $11, $12)
       ON CONFLICT (id) DO UPDATE SET tasks = $6, last_seen = now(), version = $8,
         stages = $9, takeovers = $10, lease_losses = $11, wake_failures = $12`,
      [
        worker.id,
        worker.host,
        worker.pid,
        worker.runtimes,
        worker.labels,
        worker.tasks,
        worker.started,
        worker.version,
        counts.stages,
        counts.takeovers,
        counts.leaseLosses,
        counts.wakeFailures,
      ],
    );
    await this.expire();
  }

  /** Deletes the rows of workers not seen for longer than the expiry; how many. */
  async expire(seconds = workerExpirySeconds()): Promise<number> {
    await this.table();
    const { rows } = await this.db.executeSql(
      `DELETE FROM ${this.name} WHERE last_seen < now() - make_interval(secs => $1) RETURNING id`,
      [seconds],
    );
    await new QueueLevers(this.db, this.schema).forgetOld(seconds);
    return rows.length;
  }

  /** `troupe workers --prune`: deletes every gone worker's row now; how many. */
  prune(): Promise<number> {
    return this.expire(GONE_AFTER_MS / 1000);
  }

  async remove(id: string): Promise<void> {
    await this.table();
    await this.db.executeSql(`DELETE FROM ${this.name} WHERE id = $1`, [id]);
  }

  async list(): Promise<WorkerRow[]> {
    await this.table();
    await this.expire();
    const { rows } = await this.db.executeSql(
      `SELECT id, host, pid, runtimes, labels, tasks, started, last_seen, version,
              ${COUNT_COLUMNS.join(', ')}, last_seen < now() - make_interval(secs => $1) AS gone
       FROM ${this.name} ORDER BY started`,
      [GONE_AFTER_MS / 1000],
    );
    return rows.map((r) => ({
      id: r.id,
      host: r.host,
      pid: r.pid,
      runtimes: r.runtimes,
      labels: r.labels,
      // a gone worker runs nothing: its last tasks are another worker's to take over
      tasks: r.gone ? [] : r.tasks,
      started: new Date(r.started).toISOString(),
      lastSeen: new Date(r.last_seen).toISOString(),
      version: r.version ?? null,
      stages: r.stages,
      takeovers: r.takeovers,
      leaseLosses: r.lease_losses,
      wakeFailures: r.wake_failures,
      gone: r.gone,
    }));
  }
}
