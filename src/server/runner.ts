import { messageOf, TaskBusyError } from '../core/errors.js';
import type { EventStore } from '../core/event-store.js';
import { AWAITING_PERSON_STATUSES } from '../core/events.js';
import type { TaskService } from '../engine/task-service.js';

/** Gives a task that can go on to the work queue: its wake-ups, in the lanes its steps need. */
export type HandOff = (taskId: string) => Promise<void>;

/**
 * Carries tasks on in the background once a request has recorded what a person decided. Without
 * a work queue they run in the server process, one executor per task at a time (a second request
 * for a task already running here is folded into one more pass after the current one). With a
 * queue (`handOff`) they go to the workers, in the lanes their steps need: the server never runs
 * a stage outside the lanes, runtimes and labels the workers serve.
 */
export class Runner {
  #running = new Map<string, Promise<void>>();
  #again = new Set<string>();
  #closing = false;
  /** Aborted on shutdown: runs stop at once, and the stage in progress is done again on resume. */
  #stop = new AbortController();

  constructor(
    private readonly tasks: TaskService,
    private readonly store: EventStore,
    private readonly log: (line: string) => void = () => {},
    private readonly handOff: HandOff | null = null,
  ) {}

  /** Tasks run by the workers of a queue, not here. */
  get handsOff(): boolean {
    return this.handOff !== null;
  }

  get active(): string[] {
    return this.handOff ? [] : [...this.#running.keys()];
  }

  run(taskId: string): void {
    if (this.#closing) return;
    if (this.handOff) {
      const queued = this.handOff(taskId)
        .catch((error) => this.log(`${taskId}: not queued: ${messageOf(error)}`))
        .finally(() => this.#running.delete(taskId));
      this.#running.set(taskId, queued);
      return;
    }
    if (this.#running.has(taskId)) {
      this.#again.add(taskId);
      return;
    }
    const done = this.#loop(taskId).finally(() => this.#running.delete(taskId));
    this.#running.set(taskId, done);
  }

  /**
   * Every `ms`, tasks waiting for a person, or for a mailbox agent (status `waiting`), are
   * checked for a reply on their bus thread (task/<id>); one that got it carries on here.
   */
  watchMail(ms = 2000): () => void {
    const timer = setInterval(() => {
      if (this.#closing) return;
      for (const t of this.store.tasks({ status: [...AWAITING_PERSON_STATUSES, 'waiting'] })) {
        if (this.#running.has(t.id)) continue;
        try {
          if (this.tasks.takeMailReplies(t.id)) this.run(t.id);
        } catch (error) {
          this.log(`${t.id}: reply not taken: ${messageOf(error)}`);
        }
      }
    }, ms);
    timer.unref();
    return () => clearInterval(timer);
  }

  /**
   * Tasks left running or pending by a process that is gone (its lease is free): carry them on.
   * None with a queue: its workers' check lane finds those.
   */
  resumeOrphans(): string[] {
    if (this.handOff) return [];
    const orphans = this.store
      .tasks({ status: ['running', 'pending'] })
      .filter((t) => this.store.leaseHolder(t.id) === null)
      .map((t) => t.id);
    for (const id of orphans) this.run(id);
    return orphans;
  }

  /**
   * Every `ms` (a lease period), unfinished tasks whose owner is gone — the process that holds
   * their lease died, or its lease expired — are carried on here, as `troupe resume` would.
   * Tasks no process has taken (a queue's backlog) are left to the workers.
   */
  adoptOrphans(ms: number): () => void {
    if (this.handOff) return () => {};
    const timer = setInterval(() => {
      if (this.#closing) return;
      try {
        for (const id of this.#abandoned()) {
          this.log(`${id}: its process is gone; carrying it on here`);
          this.run(id);
        }
      } catch (error) {
        this.log(`orphaned tasks not looked for: ${messageOf(error)}`);
      }
    }, ms);
    timer.unref();
    return () => clearInterval(timer);
  }

  #abandoned(): string[] {
    return this.store
      .tasks({ status: ['running', 'pending', 'waiting'] })
      .filter((t) => !this.#running.has(t.id) && this.store.lease(t.id)?.alive === false)
      .map((t) => t.id);
  }

  /** Stops taking work and stops the runs in progress; resolves when they have ended, or after `ms`. */
  async drain(ms: number): Promise<boolean> {
    this.#closing = true;
    this.#stop.abort();
    const all = Promise.allSettled(this.#running.values()).then(() => true);
    const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref());
    return Promise.race([all, timeout]);
  }

  async #loop(taskId: string): Promise<void> {
    do {
      this.#again.delete(taskId);
      try {
        const state = await this.tasks.continue(taskId, undefined, this.#stop.signal);
        this.log(`${taskId} ${state.status}`);
      } catch (error) {
        // another process runs it: it shows up live through the event log all the same
        if (error instanceof TaskBusyError) return;
        this.log(`${taskId} stopped: ${messageOf(error)}`);
      }
    } while (this.#again.has(taskId) && !this.#closing);
  }
}
