import type PgBoss from 'pg-boss';
import type { DeadLetter, Wake, WakeHandler, WakeJob, WorkOptions, WorkQueue } from './work-queue.js';

/**
 * The work queue on pg-boss (PostgreSQL). One pg-boss queue per lane (`troupe-claude`,
 * `troupe-any`, `troupe-check`, …), all with the `short` policy keyed by task id, so a wake-up
 * not yet taken absorbs its duplicates; failed jobs are retried with an exponential backoff and,
 * past the limit, copied to `troupe-dead`. pg-boss is loaded only when a queue is opened.
 */

export const DEAD_QUEUE = 'troupe-dead';

export interface QueueSettings {
  /** postgres://… of the queue's database. */
  url: string;
  /** Failures of one wake-up before it is dead (default 3). */
  retryLimit?: number;
  /** The first retry's delay in seconds; each next one about twice as long (default 10). */
  retryDelaySeconds?: number;
  /**
   * How often an idle worker asks for work, in ms (default 500): how long a wake-up sent by another
   * process may wait before it is taken, against one fetch per lane a period while idle.
   */
  pollMs?: number;
  /** Expire stale jobs and move the failed ones (a worker's queue); clients only send. */
  supervise?: boolean;
  onError?: (error: Error) => void;
}

/** A lane's queue: what workers serving it take. */
export function laneQueue(lane: string): string {
  if (!/^[a-z0-9-]+$/.test(lane)) throw new Error(`bad lane name ${lane}`);
  return `troupe-${lane}`;
}

const DEAD_LETTERS =
  "SELECT data, output, created_on FROM pgboss.job WHERE name = $1 AND state < 'active' ORDER BY created_on";

interface DeadRow {
  data: { taskId: string };
  output: { message?: string } | null;
  created_on: Date;
}

function toDeadLetters(rows: DeadRow[]): DeadLetter[] {
  return rows.map((row) => ({
    taskId: row.data.taskId,
    error: row.output?.message ?? 'failed',
    at: row.created_on.toISOString(),
  }));
}

/** The dead letters, read without starting pg-boss; none when it was never installed there. */
export async function readDeadLetters(url: string): Promise<DeadLetter[]> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({
    connectionString: url,
    application_name: 'troupe',
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  try {
    const installed = await client.query<{ t: string | null }>("SELECT to_regclass('pgboss.job')::text AS t");
    if (!installed.rows[0]?.t) return [];
    return toDeadLetters((await client.query<DeadRow>(DEAD_LETTERS, [DEAD_QUEUE])).rows);
  } finally {
    await client.end().catch(() => {});
  }
}

/** How often a job's outcome is recorded before giving up (about 30 s at RETRY_PAUSE_MS). */
const SETTLE_ATTEMPTS = 60;
/** The pause before asking a database that failed again, however short the polling. */
const RETRY_PAUSE_MS = 500;

export async function openPgBossQueue(settings: QueueSettings): Promise<PgBossQueue> {
  const { default: PgBossClass } = await import('pg-boss');
  const boss = new PgBossClass({
    connectionString: settings.url,
    application_name: 'troupe',
    max: 4,
    supervise: settings.supervise ?? false,
    schedule: false,
    // a job a dead worker held comes back after this long at the latest; the check lane brings
    // a task back sooner (docs/distributed.md)
    expireInSeconds: 60 * 60,
  });
  const onError = settings.onError ?? (() => {});
  boss.on('error', onError);
  await boss.start();
  const queue = new PgBossQueue(boss, settings, onError);
  await queue.ensure(DEAD_QUEUE);
  return queue;
}

export class PgBossQueue implements WorkQueue {
  private readonly created = new Set<string>();
  private creating: Promise<void> = Promise.resolve();
  private readonly active = new Set<Promise<void>>();
  private readonly loops: Promise<void>[] = [];
  private working = false;
  /** One per work loop: stop() wakes them all. */
  private readonly alarms = new Set<Alarm>();

  constructor(
    private readonly boss: PgBoss,
    private readonly settings: QueueSettings,
    private readonly onError: (error: Error) => void,
  ) {}

  get db(): PgBoss.Db {
    return this.boss.getDb();
  }

  /** Creates the queue unless it exists; one at a time, since pg-boss makes a partition for each. */
  ensure(name: string): Promise<void> {
    if (this.created.has(name)) return Promise.resolve();
    const made = this.creating.then(() => this.create(name));
    this.creating = made.catch(() => {});
    return made;
  }

  private async create(name: string): Promise<void> {
    if (this.created.has(name)) return;
    for (let attempt = 1; ; attempt++) {
      try {
        if (!(await this.boss.getQueue(name))) {
          await this.boss.createQueue(
            name,
            name === DEAD_QUEUE
              ? { name, policy: 'standard', retentionMinutes: 60 * 24 * 30 }
              : { name, policy: 'short', deadLetter: DEAD_QUEUE },
          );
        }
        this.created.add(name);
        return;
      } catch (error) {
        // another process creating queues at the same time (their DDL can deadlock): again
        if (attempt >= 5 || !/deadlock|duplicate key|already exists/.test((error as Error).message))
          throw error;
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      }
    }
  }

  async enqueue(wake: Wake, options: { startAfter?: Date } = {}): Promise<void> {
    const name = laneQueue(wake.lane);
    await this.ensure(name);
    await this.boss.send(
      name,
      { taskId: wake.taskId, lane: wake.lane },
      {
        singletonKey: wake.taskId,
        retryLimit: this.settings.retryLimit ?? 3,
        retryDelay: this.settings.retryDelaySeconds ?? 10,
        retryBackoff: true,
        deadLetter: DEAD_QUEUE,
        ...(options.startAfter && options.startAfter.getTime() > Date.now()
          ? { startAfter: options.startAfter }
          : {}),
      },
    );
  }

  work(options: WorkOptions, handler: WakeHandler): void {
    this.working = true;
    this.loops.push(this.loop(options.lanes.map(laneQueue), options.concurrency, handler));
  }

  async stop(): Promise<void> {
    this.working = false;
    for (const alarm of this.alarms) alarm.ring();
    await Promise.allSettled(this.loops);
    await Promise.allSettled([...this.active]);
  }

  async deadLetters(): Promise<DeadLetter[]> {
    return toDeadLetters((await this.db.executeSql(DEAD_LETTERS, [DEAD_QUEUE])).rows);
  }

  async revive(taskId: string): Promise<boolean> {
    const { rows } = await this.db.executeSql(
      `DELETE FROM pgboss.job WHERE name = $1 AND data->>'taskId' = $2 AND state < 'active' RETURNING id`,
      [DEAD_QUEUE, taskId],
    );
    return rows.length > 0;
  }

  async close(): Promise<void> {
    await this.stop();
    await this.boss.stop({ graceful: false, wait: true, close: true });
  }

  /** Takes jobs while slots are free, round-robin over the queues; idles `pollMs` when there are none. */
  private async loop(queues: string[], concurrency: number, handler: WakeHandler): Promise<void> {
    const mine = new Set<Promise<void>>();
    // this loop's own: a job it took that ends wakes it, and no other loop (each idles on its own)
    const alarm = new Alarm();
    this.alarms.add(alarm);
    let turn = 0;
    while (this.working) {
      let taken = 0;
      let failed = false;
      try {
        for (let i = 0; i < queues.length && mine.size < concurrency && this.working; i++) {
          const name = queues[(turn + i) % queues.length]!;
          await this.ensure(name);
          const jobs = await this.boss.fetch<Wake>(name, {
            batchSize: concurrency - mine.size,
            includeMetadata: true,
          });
          for (const job of jobs) {
            taken++;
            this.run(name, job, handler, mine, alarm);
          }
        }
      } catch (error) {
        this.onError(error as Error); // the database is away: try again after the pause
        failed = true;
      }
      turn++;
      if (taken > 0 && mine.size < concurrency) continue;
      const pollMs = this.settings.pollMs ?? 500;
      await alarm.wait(failed ? Math.max(pollMs, RETRY_PAUSE_MS) : pollMs);
    }
    this.alarms.delete(alarm);
  }

  private run(
    name: string,
    job: PgBoss.JobWithMetadata<Wake>,
    handler: WakeHandler,
    mine: Set<Promise<void>>,
    alarm: Alarm,
  ) {
    const wake: WakeJob = {
      id: job.id,
      taskId: job.data.taskId,
      lane: job.data.lane,
      retries: job.retryCount,
    };
    const done = handler(wake)
      .then(
        () => this.settle(() => this.boss.complete(name, job.id)),
        (error: unknown) =>
          this.settle(() =>
            this.boss.fail(name, job.id, { message: error instanceof Error ? error.message : String(error) }),
          ),
      )
      .finally(() => {
        mine.delete(done);
        this.active.delete(done);
        alarm.ring();
      });
    mine.add(done);
    this.active.add(done);
  }

  /**
   * Records a job's outcome, asking again while the database is away (a restart): a job left
   * active would come back only when it expires, an hour later.
   */
  private async settle(record: () => Promise<unknown>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await record();
        return;
      } catch (error) {
        this.onError(error as Error);
        if (attempt >= SETTLE_ATTEMPTS) return;
        await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS));
      }
    }
  }
}

/**
 * A work loop's idle pause, cut short by ring(). A ring while the loop is not pausing (a job ended
 * during a fetch) makes its next pause end at once, so the slot it freed is filled without waiting.
 */
class Alarm {
  private rung = false;
  private stopPause: (() => void) | null = null;

  ring(): void {
    if (this.stopPause) this.stopPause();
    else this.rung = true;
  }

  wait(ms: number): Promise<void> {
    if (this.rung) {
      this.rung = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => end(), ms);
      const end = () => {
        clearTimeout(timer);
        this.stopPause = null;
        resolve();
      };
      this.stopPause = end;
    });
  }
}
