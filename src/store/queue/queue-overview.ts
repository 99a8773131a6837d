import type PgBoss from 'pg-boss';
import { BOSS_SCHEMA, DEAD_QUEUE, QUEUE_PREFIX } from './pg-boss-queue.js';
import { withQueueDb } from './queue-db.js';
import { type Lever, QueueLevers } from './queue-levers.js';
import { namespaced } from './queue-namespace.js';
import { NO_COUNTS, type WorkerCounts, WorkerRegistry, type WorkerRow } from './worker-registry.js';

/**
 * What an operator asks of a queue (`troupe queue`, `troupe workers`, `GET /api/queue`, the
 * metrics): per lane, read with SQL from pg-boss's job table in the project's namespace.
 */

export interface LaneSummary {
  lane: string;
  /** Wake-ups not taken yet (`created` or `retry`), due or scheduled for later. */
  backlog: number;
  /** Of those, the ones due now. */
  due: number;
  /** How long the oldest due wake-up has waited (s); null when none is due. */
  oldestWaitSeconds: number | null;
  /** Taken by a worker and not finished. */
  active: number;
  /** Waiting to be tried again after a failure (`retry`). */
  retrying: number;
  /** Failed past their retry limit (their task is among the dead letters), kept until pg-boss's retention. */
  failed: number;
  paused: boolean;
}

export interface ActiveJob {
  lane: string;
  taskId: string;
  started: string;
  retries: number;
  /** The live worker running the task, by its row in `troupe workers`; null: none says so (its holder died). */
  holder: string | null;
}

export interface QueueOverview {
  lanes: LaneSummary[];
  active: ActiveJob[];
  /** Tasks in the dead-letter queue. */
  deadLetters: number;
  workers: WorkerRow[];
  /** The counts of every worker in `workers` (live or gone) added up: takeovers, lease losses, wake failures, stages. */
  totals: WorkerCounts;
  levers: Lever[];
}

const laneSql = (boss: string) => `SELECT name,
    count(*) FILTER (WHERE state IN ('created', 'retry')) AS backlog,
    count(*) FILTER (WHERE state IN ('created', 'retry') AND start_after <= now()) AS due,
    extract(epoch FROM now() - min(start_after) FILTER (WHERE state IN ('created', 'retry') AND start_after <= now())) AS oldest,
    count(*) FILTER (WHERE state = 'active') AS active,
    count(*) FILTER (WHERE state = 'retry') AS retrying,
    count(*) FILTER (WHERE state = 'failed') AS failed
  FROM ${boss}.job WHERE name LIKE '${QUEUE_PREFIX}%' AND name <> $1 GROUP BY name ORDER BY name`;

const activeSql = (boss: string) =>
  `SELECT name, data->>'taskId' AS task_id, started_on, retry_count FROM ${boss}.job
   WHERE name LIKE '${QUEUE_PREFIX}%' AND state = 'active' ORDER BY started_on`;

/** The queue's overview on `db` (a queue's connection, or one of its own: readQueueOverview). */
export async function queueOverview(db: PgBoss.Db, schema: string | null): Promise<QueueOverview> {
  const boss = namespaced(BOSS_SCHEMA, schema);
  const workers = await new WorkerRegistry(db, schema).list();
  const levers = await new QueueLevers(db, schema).list();
  const paused = new Set(levers.filter((lever) => lever.kind === 'lane').map((lever) => lever.target));
  const installed = await db.executeSql('SELECT to_regclass($1)::text AS t', [`${boss}.job`]);
  const lanes = new Map<string, LaneSummary>();
  const active: ActiveJob[] = [];
  let deadLetters = 0;
  if (installed.rows[0]?.t) {
    for (const r of (await db.executeSql(laneSql(boss), [DEAD_QUEUE])).rows) {
      const lane = r.name.slice(QUEUE_PREFIX.length);
      lanes.set(lane, {
        lane,
        backlog: Number(r.backlog),
        due: Number(r.due),
        oldestWaitSeconds: r.oldest === null ? null : Math.max(0, Math.round(Number(r.oldest))),
        active: Number(r.active),
        retrying: Number(r.retrying),
        failed: Number(r.failed),
        paused: paused.has(lane),
      });
    }
    const holders = new Map<string, string>();
    for (const worker of workers)
      if (!worker.gone) for (const task of worker.tasks) holders.set(task, worker.id);
    for (const r of (await db.executeSql(activeSql(boss), [])).rows) {
      active.push({
        lane: r.name.slice(QUEUE_PREFIX.length),
        taskId: r.task_id,
        started: new Date(r.started_on).toISOString(),
        retries: Number(r.retry_count),
        holder: holders.get(r.task_id) ?? null,
      });
    }
    const dead = await db.executeSql(
      `SELECT count(*) AS n FROM ${boss}.job WHERE name = $1 AND state < 'active'`,
      [DEAD_QUEUE],
    );
    deadLetters = Number(dead.rows[0]?.n ?? 0);
  }
  for (const lane of paused)
    if (!lanes.has(lane))
      lanes.set(lane, {
        lane,
        backlog: 0,
        due: 0,
        oldestWaitSeconds: null,
        active: 0,
        retrying: 0,
        failed: 0,
        paused: true,
      });
  return {
    lanes: [...lanes.values()].sort((a, b) => a.lane.localeCompare(b.lane)),
    active,
    deadLetters,
    workers,
    totals: totalCounts(workers),
    levers,
  };
}

function totalCounts(workers: WorkerCounts[]): WorkerCounts {
  const totals = { ...NO_COUNTS };
  for (const worker of workers)
    for (const key of Object.keys(totals) as (keyof WorkerCounts)[]) totals[key] += worker[key];
  return totals;
}

/** The overview of the queue at `url`, read without starting pg-boss. */
export function readQueueOverview(url: string): Promise<QueueOverview> {
  return withQueueDb(url, (db, location) => queueOverview(db, location.schema));
}

/** The workers' totals, as `troupe queue` prints them. */
export function totalsLine(totals: WorkerCounts, workers: number): string {
  return `takeovers ${totals.takeovers}, lease losses ${totals.leaseLosses}, wake-up failures ${totals.wakeFailures}, stages run ${totals.stages} (by the ${workers} worker${workers === 1 ? '' : 's'} listed)`;
}

/** One line per lane, as `troupe queue` and `troupe workers` print them. */
export function laneLine(lane: LaneSummary): string {
  const wait = lane.oldestWaitSeconds === null ? '' : `, oldest waiting ${lane.oldestWaitSeconds}s`;
  return `${lane.lane}${lane.paused ? ' (paused)' : ''}: backlog ${lane.backlog} (${lane.due} due${wait}), active ${lane.active}, retrying ${lane.retrying}, failed ${lane.failed}`;
}
