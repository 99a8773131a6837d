import type PgBoss from 'pg-boss';
import { withQueueDb } from './queue-db.js';
import { namespaced, queueLocation } from './queue-namespace.js';
import { type FailureCount, type ParkedTask, TaskFailures } from './task-failures.js';
import {
  type DeadLetter,
  servesLane,
  type Wake,
  type WakeHandler,
  type WakeJob,
  type WorkOptions,
  type WorkQueue,
} from './work-queue.js';

/**
 * The work queue on pg-boss (PostgreSQL). One pg-boss queue per lane (`troupe-claude`,
 * `troupe-any`, `troupe-check`, …), all with the `short` policy keyed by task id, so a wake-up
 * not yet taken absorbs its duplicates; failed jobs are retried with an exponential backoff and,
 * past the limit, copied to `troupe-dead`. pg-boss is loaded only when a queue is opened. A
 * project's queue is in a namespace of its own (queue-namespace.ts): pg-boss schema
 * `pgboss_<schema>`, wake-up channel `troupe_wake_<schema>`.
 */

export const DEAD_QUEUE = 'troupe-dead';
/** Retries of a failed wake-up, and failed wake-ups of a task past its first, by default. */
const DEFAULT_RETRY_LIMIT = 3;

/**
 * Told each wake-up due now, with its queue's name: the workers serving it fetch at once rather
 * than at their next poll. Polling stays, so a notification missed (the listener reconnecting)
 * costs at most one poll period.
 */
const WAKE_CHANNEL = 'troupe_wake';
export const BOSS_SCHEMA = 'pgboss';

export const QUEUE_PREFIX = 'troupe-';

/** A fetch loop: its queues (the labelled ones join as they appear), and while it idles, how to wake it. */
interface Loop {
  queues: Set<string>;
  lanes: readonly string[];
  labels: readonly string[];
  wake: (() => void) | null;
  /** Woken while busy: the next idle is skipped, so a wake-up told meanwhile is not missed. */
  woken: boolean;
}

export interface QueueSettings {
  /** postgres://… of the queue's database. */
  url: string;
  /** Failures of one wake-up before it is dead (default 3). */
  retryLimit?: number;
  /** The first retry's delay in seconds; each next one about twice as long (default 10). */
  retryDelaySeconds?: number;
  /** How often an idle worker asks for work, in ms (default 500). */
  pollMs?: number;
  /** Expire stale jobs and move the failed ones (a worker's queue); clients only send. */
  supervise?: boolean;
  onError?: (error: Error) => void;
  /** Told each wake-up whose handler failed here (a worker's metrics count them). */
  onWakeFailed?: (wake: WakeJob) => void;
}

/** A lane's queue: what workers serving it take. */
export function laneQueue(lane: string): string {
  if (!/^[a-z0-9-]+$/.test(lane)) throw new Error(`bad lane name ${lane}`);
  return `${QUEUE_PREFIX}${lane}`;
}

const deadLettersSql = (bossSchema: string) =>
  `SELECT data, output, created_on FROM ${bossSchema}.job WHERE name = $1 AND state < 'active' ORDER BY created_on`;

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
export function readDeadLetters(url: string): Promise<DeadLetter[]> {
  return withQueueDb(url, async (db, location) => {
    const bossSchema = namespaced(BOSS_SCHEMA, location.schema);
    const installed = await db.executeSql('SELECT to_regclass($1)::text AS t', [`${bossSchema}.job`]);
    if (!installed.rows[0]?.t) return [];
    return toDeadLetters((await db.executeSql(deadLettersSql(bossSchema), [DEAD_QUEUE])).rows);
  });
}

/** How often a job's outcome is recorded before giving up (about 30 s at RETRY_PAUSE_MS). */
const SETTLE_ATTEMPTS = 60;
/** The pause before asking a database that failed again, however short the polling. */
const RETRY_PAUSE_MS = 500;

export async function openPgBossQueue(settings: QueueSettings): Promise<PgBossQueue> {
  const { default: PgBossClass } = await import('pg-boss');
  const location = queueLocation(settings.url);
  const boss = new PgBossClass({
    connectionString: location.url,
    schema: namespaced(BOSS_SCHEMA, location.schema),
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
  const queue = new PgBossQueue(boss, settings, location.schema, onError);
  await queue.ensure(DEAD_QUEUE);
  return queue;
}

export class PgBossQueue implements WorkQueue {
  private readonly created = new Set<string>();
  private creating: Promise<void> = Promise.resolve();
  private readonly active = new Set<Promise<void>>();
  private readonly loops: Promise<void>[] = [];
  private readonly loopStates = new Set<Loop>();
  private listener: Promise<{ end(): Promise<void> } | null> | null = null;
  private working = false;
  /**
   * The queues of paused lanes: not fetched from at all. Skipping the fetch (rather than taking a
   * wake-up and sending it back) leaves a paused lane's jobs as they were — no retry spent, no
   * reordering, their age still shown by `troupe queue` — and costs nothing while paused.
   */
  private paused = new Set<string>();
  private readonly bossSchema: string;
  private readonly channel: string;
  private readonly url: string;
  private readonly failures: TaskFailures;

  constructor(
    private readonly boss: PgBoss,
    private readonly settings: QueueSettings,
    /** The project's namespace on the database (queue-namespace.ts); null: the shared default. */
    readonly schema: string | null,
    private readonly onError: (error: Error) => void,
  ) {
    this.bossSchema = namespaced(BOSS_SCHEMA, schema);
    this.channel = namespaced(WAKE_CHANNEL, schema);
    this.url = queueLocation(settings.url).url;
    this.failures = new TaskFailures(this.db, schema, settings.retryLimit ?? DEFAULT_RETRY_LIMIT);
  }

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
    const later = options.startAfter !== undefined && options.startAfter.getTime() > Date.now();
    await this.ensure(name);
    await this.boss.send(
      name,
      { taskId: wake.taskId, lane: wake.lane },
      {
        singletonKey: wake.taskId,
        retryLimit: this.settings.retryLimit ?? DEFAULT_RETRY_LIMIT,
        retryDelay: this.settings.retryDelaySeconds ?? 10,
        retryBackoff: true,
        deadLetter: DEAD_QUEUE,
        ...(later ? { startAfter: options.startAfter } : {}),
      },
    );
    if (!later) await this.db.executeSql('SELECT pg_notify($1, $2)', [this.channel, name]);
  }

  work(options: WorkOptions, handler: WakeHandler): void {
    this.working = true;
    this.listen();
    const loop: Loop = {
      queues: new Set(options.lanes.map(laneQueue)),
      lanes: options.lanes,
      labels: options.labels ?? [],
      wake: null,
      woken: false,
    };
    this.loops.push(this.loop(loop, options.concurrency, handler));
  }

  pause(lanes: readonly string[]): void {
    const before = this.paused;
    this.paused = new Set(lanes.map(laneQueue));
    // a lane resumed: its wake-ups are taken now rather than at the next poll
    if ([...before].some((name) => !this.paused.has(name))) this.wakeLoops(() => true);
  }

  async stop(): Promise<void> {
    this.working = false;
    this.wakeLoops(() => true);
    await Promise.allSettled(this.loops);
    await Promise.allSettled([...this.active]);
    const listener = await this.listener;
    this.listener = null;
    await listener?.end().catch(() => {});
  }

  async deadLetters(): Promise<DeadLetter[]> {
    return toDeadLetters((await this.db.executeSql(deadLettersSql(this.bossSchema), [DEAD_QUEUE])).rows);
  }

  countFailure(taskId: string, error: string): Promise<FailureCount> {
    return this.failures.record(taskId, error);
  }

  parkedTask(taskId: string): Promise<ParkedTask | null> {
    return this.failures.parkedTask(taskId);
  }

  parked(): Promise<ParkedTask[]> {
    return this.failures.parked();
  }

  async revive(taskId: string): Promise<boolean> {
    const { rows } = await this.db.executeSql(
      `DELETE FROM ${this.bossSchema}.job WHERE name = $1 AND data->>'taskId' = $2 AND state < 'active' RETURNING id`,
      [DEAD_QUEUE, taskId],
    );
    const parked = await this.failures.clear(taskId);
    return rows.length > 0 || parked;
  }

  async close(): Promise<void> {
    await this.stop();
    await this.boss.stop({ graceful: false, wait: true, close: true });
  }

  /** LISTENs for wake-ups on a connection of its own; connected again at the next poll if it drops. */
  private listen(): void {
    if (this.listener) return;
    const connecting = (async () => {
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: this.url, application_name: 'troupe' });
      const lost = () => {
        if (this.listener === connecting) this.listener = null;
        client.end().catch(() => {});
      };
      client.on('error', lost);
      client.on('end', lost);
      client.on('notification', ({ payload }) =>
        this.wakeLoops((loop) => loop.queues.has(payload ?? '') || adopt(loop, payload ?? '')),
      );
      try {
        await client.connect();
        await client.query(`LISTEN ${this.channel}`);
        return client;
      } catch {
        lost();
        return null;
      }
    })();
    this.listener = connecting;
  }

  private wakeLoops(which: (loop: Loop) => boolean): void {
    for (const loop of this.loopStates) if (which(loop)) wakeLoop(loop);
  }

  /** The labelled lanes the loop serves that exist by now (made by whoever sent to them). */
  private async discover(loop: Loop): Promise<void> {
    if (loop.labels.length === 0) return;
    const { rows } = await this.db.executeSql(
      `SELECT name FROM ${this.bossSchema}.queue WHERE name LIKE '${QUEUE_PREFIX}%--%'`,
      [],
    );
    for (const { name } of rows as Array<{ name: string }>) adopt(loop, name);
  }

  /** Takes jobs while slots are free, round-robin over the queues; idles `pollMs` when there are none. */
  private async loop(loop: Loop, concurrency: number, handler: WakeHandler): Promise<void> {
    this.loopStates.add(loop);
    const mine = new Set<Promise<void>>();
    let turn = 0;
    let discovered = false;
    while (this.working) {
      let taken = 0;
      const queues = [...loop.queues].filter((name) => !this.paused.has(name));
      try {
        if (!discovered) await this.discover(loop);
        discovered = true;
        for (let i = 0; i < queues.length && mine.size < concurrency && this.working; i++) {
          const name = queues[(turn + i) % queues.length]!;
          await this.ensure(name);
          const jobs = await this.boss.fetch<Wake>(name, {
            batchSize: concurrency - mine.size,
            includeMetadata: true,
          });
          for (const job of jobs) {
            taken++;
            this.run(name, job, handler, mine, loop);
          }
        }
      } catch (error) {
        this.onError(error as Error); // the database is away: try again after the pause
      }
      turn++;
      if (taken > 0 && mine.size < concurrency) continue;
      if (loop.woken) {
        loop.woken = false;
        continue;
      }
      discovered = false; // asked again after the pause
      this.listen();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.settings.pollMs ?? 500);
        loop.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      loop.wake = null;
      loop.woken = false;
    }
    this.loopStates.delete(loop);
  }

  private run(
    name: string,
    job: PgBoss.JobWithMetadata<Wake>,
    handler: WakeHandler,
    mine: Set<Promise<void>>,
    loop: Loop,
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
        (error: unknown) => {
          this.settings.onWakeFailed?.(wake);
          return this.settle(() =>
            this.boss.fail(name, job.id, { message: error instanceof Error ? error.message : String(error) }),
          );
        },
      )
      .finally(() => {
        mine.delete(done);
        this.active.delete(done);
        wakeLoop(loop); // its slot is free
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

/** Adds a labelled lane's queue to a loop whose worker serves it; whether it did. */
function adopt(loop: Loop, queue: string): boolean {
  if (loop.queues.has(queue) || !queue.startsWith(QUEUE_PREFIX)) return false;
  if (!servesLane(queue.slice(QUEUE_PREFIX.length), loop.lanes, loop.labels)) return false;
  loop.queues.add(queue);
  return true;
}

/** Ends the loop's idle pause, or, while it is busy, spares it the next one. */
function wakeLoop(loop: Loop): void {
  if (loop.wake) loop.wake();
  else loop.woken = true;
}
