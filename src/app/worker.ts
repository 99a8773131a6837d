import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { LeaseLostError, NotFoundError, TaskBusyError } from '../core/errors.js';
import { isStopped, type TaskStatus } from '../core/events.js';
import type { TaskState } from '../engine/fold/task-state.js';
import type { Step } from '../engine/plan/plan.js';
import { stepLabels, stepNotBefore, stepRuntime, wakeUps } from '../engine/plan/wake-ups.js';
import type { QueueLevers, WorkerLever } from '../store/queue/queue-levers.js';
import type { ParkedTask } from '../store/queue/task-failures.js';
import { labelledLane, type WakeJob, type WorkQueue } from '../store/queue/work-queue.js';
import type { WorkerCounts, WorkerRegistry } from '../store/queue/worker-registry.js';
import { describeStore } from '../store/store-url.js';
import { BackoffLog } from './backoff-log.js';
import { type Project, projectStoreLocation } from './project.js';

/**
 * `troupe worker`: takes wake-ups from the queue for the runtimes it serves and runs their tasks
 * through the same task service as `troupe run`, until only steps it leaves to others are left
 * (another runtime's, a wait the queue times). Then it enqueues what the task needs next. A task
 * another process holds is skipped: its holder schedules what follows, and a `check` wake-up
 * brings it back if the holder dies. See docs/distributed.md.
 */

/** The lane of steps that need no runtime (joins, merges, completion): any worker takes them. */
export const ANY_LANE = 'any';
/** The lane of "is this task's holder still alive?" wake-ups. */
export const CHECK_LANE = 'check';

export interface WorkerSettings {
  /** newWorkerId(): the worker's row in `troupe workers`, and the holder of its provider turns. */
  id: string;
  runtimes: string[];
  labels: string[];
  concurrency: number;
  /** How often a held task is checked on (s): a dead holder's task is taken within about this. */
  checkSeconds: number;
  /** After SIGTERM, how long running stages may take before they are aborted (s). */
  graceSeconds: number;
  log: (line: string) => void;
  /** The troupe it runs (cli/version.ts), in its row of `troupe workers`. */
  version: string;
  /** What it counted (stages, takeovers, lease losses, wake-up failures), written on each heartbeat. */
  counts?: () => WorkerCounts;
  /** The operator's levers, read on each heartbeat: paused lanes, and a drain or stop asked of this worker. */
  levers?: QueueLevers;
  /** Told once when this worker is asked to drain or stop (`troupe worker drain|stop <id>`). */
  onLever?: (lever: WorkerLever) => void;
}

/** Why a run is aborted when its lease was taken over: told apart from a cancel or a drain. */
const LEASE_LOST = new LeaseLostError('', 'lease lost');

export function laneOf(runtime: string | null, labels: readonly string[] = []): string {
  return labelledLane(runtime ?? ANY_LANE, labels);
}

/** Enqueues the wake-ups a task nobody runs needs (`run --detach`, `resume`, a run's end); how many. */
export async function enqueueWakeUps(queue: WorkQueue, state: TaskState): Promise<number> {
  const wakes = wakeUps(state);
  for (const wake of wakes) {
    await queue.enqueue(
      { taskId: state.id, lane: laneOf(wake.runtime, wake.labels) },
      wake.at ? { startAfter: new Date(wake.at) } : {},
    );
  }
  return wakes.length;
}

export function newWorkerId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(2).toString('hex')}`;
}

export class Worker {
  private readonly started = new Date().toISOString();
  private readonly running = new Map<string, AbortController>();
  private draining = false;
  private leverPulled = false;
  private heartbeat: NodeJS.Timeout | null = null;
  /** While the database is away the heartbeat fails every 5 s: said with a backoff. */
  private readonly errors: BackoffLog;

  constructor(
    private readonly project: Project,
    private readonly queue: WorkQueue,
    private readonly registry: WorkerRegistry,
    private readonly settings: WorkerSettings,
  ) {
    this.errors = new BackoffLog(settings.log);
  }

  get id(): string {
    return this.settings.id;
  }

  async start(): Promise<void> {
    // a lease lost (taken over after this worker was cut off): stop the run, record nothing more
    this.project.store.onLeaseLost?.((taskId) => this.running.get(taskId)?.abort(LEASE_LOST));
    await this.beat();
    this.heartbeat = setInterval(() => void this.beat(), 5000);
    const lanes = [...this.settings.runtimes, ANY_LANE];
    this.queue.work({ lanes, labels: this.settings.labels, concurrency: this.settings.concurrency }, (job) =>
      this.wake(job),
    );
    this.queue.work({ lanes: [CHECK_LANE], concurrency: 4 }, (job) => this.check(job));
  }

  /**
   * SIGTERM: take nothing more; stages running may finish within the grace period (no new ones
   * start), then the rest are aborted and run again elsewhere. Each task is handed back.
   */
  async drain(graceSeconds = this.settings.graceSeconds): Promise<void> {
    this.draining = true;
    const grace = setTimeout(() => {
      for (const stop of this.running.values()) stop.abort();
    }, graceSeconds * 1000);
    await this.queue.stop();
    clearTimeout(grace);
    if (this.heartbeat) clearInterval(this.heartbeat);
    await this.registry.remove(this.id).catch(() => {});
  }

  private async beat(): Promise<void> {
    try {
      await this.registry.seen(
        {
          id: this.id,
          host: hostname(),
          pid: process.pid,
          runtimes: this.settings.runtimes,
          labels: this.settings.labels,
          tasks: [...this.running.keys()],
          started: this.started,
          lastSeen: new Date().toISOString(),
          version: this.settings.version,
        },
        this.settings.counts?.(),
      );
      await this.readLevers();
    } catch (error) {
      this.errors.error('cannot register', error as Error);
    }
  }

  /** The paused lanes, handed to the queue; a drain or stop asked of this worker, told once. */
  private async readLevers(): Promise<void> {
    const levers = this.settings.levers;
    if (!levers) return;
    this.queue.pause(await levers.pausedLanes());
    const asked = await levers.asked(this.id);
    if (asked && !this.leverPulled) {
      this.leverPulled = true;
      this.settings.onLever?.(asked);
    }
  }

  private async wake(job: WakeJob): Promise<void> {
    const { taskId } = job;
    if (this.draining) return this.queue.enqueue({ taskId, lane: job.lane });
    const summary = this.project.store.task(taskId);
    if (!summary) throw this.notHere(taskId);
    // a task running here already schedules what it needs when its run ends; a parked one waits for a person
    if (this.running.has(taskId) || (await this.stopped(taskId, summary.status))) return;
    const stop = new AbortController();
    this.running.set(taskId, stop);
    try {
      await this.queue.enqueue(
        { taskId, lane: CHECK_LANE },
        { startAfter: new Date(Date.now() + this.settings.checkSeconds * 1000) },
      );
      this.settings.log(`${taskId}: running`);
      const state = await this.project.tasks.continue(taskId, undefined, stop.signal, (step, s) =>
        this.leaves(step, s),
      );
      if (stop.signal.reason === LEASE_LOST) return this.lostLease(taskId);
      this.settings.log(`${taskId}: left ${state.status}`);
    } catch (error) {
      if (error instanceof TaskBusyError) return; // its holder schedules what follows
      // the run stopped because another process holds the task now, which schedules what follows
      if (stop.signal.reason === LEASE_LOST || error instanceof LeaseLostError) return this.lostLease(taskId);
      this.settings.log(`${taskId}: ${(error as Error).message}`);
      if (await this.failed(taskId, (error as Error).message)) return; // parked: nothing retries it
      throw error;
    } finally {
      this.running.delete(taskId);
    }
    await this.scheduleNext(taskId);
  }

  /**
   * A wake-up for a task this project's store does not have (another project's, should queues
   * ever be shared): said, and failed rather than done, so it is retried and in the end lands
   * among the dead letters instead of vanishing.
   */
  private notHere(taskId: string): Error {
    const where = describeStore(projectStoreLocation(this.project.root, this.project.config));
    const message = `${taskId}: not in this project's store (${where}); left for its owner`;
    this.settings.log(message);
    return new NotFoundError(message);
  }

  /** Said as it is: the task was not cancelled, another worker took it over. */
  private lostLease(taskId: string): void {
    const holder = this.project.store.leaseHolder(taskId);
    const who = holder ? (holder.worker ?? `process ${holder.pid} on ${holder.host}`) : 'another worker';
    this.settings.log(`${taskId}: lease lost to ${who} — stopped`);
  }

  /**
   * Whether nothing may take the task up by itself: it ended, or it is parked, in its log or,
   * when even that append was refused, by its mark in the queue.
   */
  private async stopped(taskId: string, status: TaskStatus): Promise<boolean> {
    return isStopped(status) || (await this.queue.parkedTask(taskId)) !== null;
  }

  /**
   * A failed wake-up counts against the task, whichever job or worker ran it (retries and check
   * wake-ups alike): past the retry limit the task is parked, and whether it was is returned.
   */
  private async failed(taskId: string, message: string): Promise<boolean> {
    let parked: ParkedTask | null;
    try {
      parked = (await this.queue.countFailure(taskId, message)).parked;
    } catch (error) {
      this.settings.log(`${taskId}: failure not counted: ${(error as Error).message}`);
      return false;
    }
    if (!parked) return false;
    this.settings.log(
      `${taskId}: parked after ${parked.failures} failed runs (\`troupe resume ${taskId}\` runs it again)`,
    );
    try {
      this.project.tasks.park(taskId, parked.reason, parked.failures);
    } catch (error) {
      // the queue's mark stops it all the same
      this.settings.log(`${taskId}: parked, but its log refused to say so: ${(error as Error).message}`);
    }
    return true;
  }

  /** A task's holder may have died: when nobody holds it, it is woken where it can go on. */
  private async check(job: WakeJob): Promise<void> {
    const { taskId } = job;
    const summary = this.project.store.task(taskId);
    if (!summary) throw this.notHere(taskId);
    if (await this.stopped(taskId, summary.status)) return;
    if (this.running.has(taskId) || this.project.store.leaseHolder(taskId)) {
      await this.queue.enqueue(
        { taskId, lane: CHECK_LANE },
        { startAfter: new Date(Date.now() + this.settings.checkSeconds * 1000) },
      );
      return;
    }
    await this.scheduleNext(taskId);
  }

  /** What the task needs now, read from the store after the lease is released (nothing is missed). */
  private scheduleNext(taskId: string): Promise<number> {
    return enqueueWakeUps(this.queue, this.project.tasks.state(taskId));
  }

  /**
   * The steps this worker leaves to others: all once draining, another runtime's, one that needs
   * a label it lacks, a later one's.
   */
  private leaves(step: Step, state: TaskState): boolean {
    if (this.draining) return true;
    const runtime = stepRuntime(state, step);
    if (runtime !== null && !this.settings.runtimes.includes(runtime)) return true;
    if (stepLabels(state, step).some((label) => !this.settings.labels.includes(label))) return true;
    const at = stepNotBefore(step);
    return at !== null && Date.parse(at) > Date.now();
  }
}
