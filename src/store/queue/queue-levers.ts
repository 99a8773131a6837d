import type PgBoss from 'pg-boss';
import { ensureQueueTable } from './queue-db.js';
import { queueTable } from './queue-namespace.js';

/**
 * The operator's levers on a queue, pulled from any machine (`troupe worker drain|stop <id>`,
 * `troupe queue pause|resume <lane>`): rows of a table in the queue's namespace, read by each
 * worker on its heartbeat. A worker's row stays after it obeyed, with `done` set, so whoever
 * pulled the lever can see it was (rows of workers long gone expire with them, worker-registry.ts).
 */

/** `drain`: take no new work, let running stages finish (the worker's `--grace`), hand back, exit 0. `stop`: the same with no grace. */
export type WorkerLever = 'drain' | 'stop';
export const WORKER_LEVERS: readonly WorkerLever[] = ['drain', 'stop'];

export interface Lever {
  /** A worker's id, or a lane. */
  target: string;
  kind: 'worker' | 'lane';
  action: WorkerLever | 'pause';
  requested: string;
  /** When the worker obeyed (it exited); null while pending, and always for a paused lane. */
  done: string | null;
}

const ddl = (table: string) => [
  `CREATE TABLE IF NOT EXISTS ${table} (
    kind text NOT NULL, target text NOT NULL, action text NOT NULL,
    requested timestamptz NOT NULL DEFAULT now(), done timestamptz, PRIMARY KEY (kind, target))`,
];

export class QueueLevers {
  private ready = false;
  readonly table: string;

  /** `schema`: the project's namespace (null: the connection's default schema). */
  constructor(
    private readonly db: PgBoss.Db,
    private readonly schema: string | null,
  ) {
    this.table = queueTable(schema, 'troupe_levers');
  }

  private async ensure(): Promise<void> {
    if (this.ready) return;
    await ensureQueueTable(this.db, this.schema, ddl(this.table));
    this.ready = true;
  }

  /** Asks the worker to drain or stop (a stop wins over a drain asked before). */
  async pull(workerId: string, action: WorkerLever): Promise<void> {
    await this.ensure();
    await this.db.executeSql(
      `INSERT INTO ${this.table} (kind, target, action) VALUES ('worker', $1, $2)
       ON CONFLICT (kind, target) DO UPDATE SET action = CASE WHEN $2 = 'stop' THEN 'stop' ELSE ${this.table}.action END`,
      [workerId, action],
    );
  }

  /** What the worker is asked to do, if anything not done yet. */
  async asked(workerId: string): Promise<WorkerLever | null> {
    await this.ensure();
    const { rows } = await this.db.executeSql(
      `SELECT action FROM ${this.table} WHERE kind = 'worker' AND target = $1 AND done IS NULL`,
      [workerId],
    );
    return (rows[0]?.action as WorkerLever | undefined) ?? null;
  }

  /** The worker did as asked (it is about to exit). */
  async obeyed(workerId: string): Promise<void> {
    await this.ensure();
    await this.db.executeSql(
      `UPDATE ${this.table} SET done = now() WHERE kind = 'worker' AND target = $1 AND done IS NULL`,
      [workerId],
    );
  }

  async pause(lane: string): Promise<void> {
    await this.ensure();
    await this.db.executeSql(
      `INSERT INTO ${this.table} (kind, target, action) VALUES ('lane', $1, 'pause') ON CONFLICT DO NOTHING`,
      [lane],
    );
  }

  /** Whether the lane was paused. */
  async resume(lane: string): Promise<boolean> {
    await this.ensure();
    const { rows } = await this.db.executeSql(
      `DELETE FROM ${this.table} WHERE kind = 'lane' AND target = $1 RETURNING target`,
      [lane],
    );
    return rows.length > 0;
  }

  async pausedLanes(): Promise<string[]> {
    return (await this.list()).filter((lever) => lever.kind === 'lane').map((lever) => lever.target);
  }

  async list(): Promise<Lever[]> {
    await this.ensure();
    const { rows } = await this.db.executeSql(
      `SELECT kind, target, action, requested, done FROM ${this.table} ORDER BY requested`,
      [],
    );
    return rows.map((r) => ({
      kind: r.kind,
      target: r.target,
      action: r.action,
      requested: new Date(r.requested).toISOString(),
      done: r.done ? new Date(r.done).toISOString() : null,
    }));
  }

  /**
   * Forgets the worker levers obeyed, or asked of a worker that never read them (it died first),
   * more than `seconds` ago: as gone workers expire.
   */
  async forgetOld(seconds: number): Promise<void> {
    await this.ensure();
    await this.db.executeSql(
      `DELETE FROM ${this.table} WHERE kind = 'worker' AND coalesce(done, requested) < now() - make_interval(secs => $1)`,
      [seconds],
    );
  }
}
