import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { EventOf, StoredEvent, TaskEvent, TaskEventType, TaskStatus } from './events.js';

/**
 * The append-only event log every task lives in: the single source of truth. SQLite for one
 * machine; PostgreSQL for many. All pass store/contract.ts.
 */

export interface TaskSummary {
  id: string;
  status: TaskStatus;
  pipeline: string;
  input: string;
  /** The agent of the task's last stage started (null before its first stage). */
  currentAgent: string | null;
  /** When the task's last event was appended. */
  created: string;
  updated: string;
}

/** Which tasks a list holds; newest first, then `offset` and `limit` (applied after the filters). */
export interface TaskFilter {
  status?: TaskStatus[];
  /** Only the tasks of the pipeline of this name. */
  pipeline?: string;
  limit?: number;
  offset?: number;
}

/** Who runs a task right now; a lease held by a live process keeps others from running it too. */
export interface LeaseHolder {
  pid: number;
  host: string;
  /** Which worker of the process, when one process runs several (`troupe worker`). */
  worker?: string;
}

/** A task's lease as recorded, and whether its holder still runs (one that died, or whose lease expired, does not). */
export interface Lease {
  holder: LeaseHolder;
  alive: boolean;
}

export interface SummaryUpdate {
  status: TaskStatus;
}

export interface EventStore {
  /** Creates the task with its first event; the id is new (T-XXXXXX). */
  createTask(event: EventOf<'task_created'>): StoredEvent;
  /**
   * Appends events to one task in one transaction, with its new status. Their seqs are
   * consecutive (the executor's poller relies on it to pass over its own events unread).
   * Throws StateError when the task has already ended: nothing is written after the end.
   */
  append(taskId: string, events: TaskEvent[], summary: SummaryUpdate, at?: string): StoredEvent[];
  /**
   * Sets aside the task's events from `fromSeq` on (kept for audit, no longer part of its
   * history) and appends `event`, in one transaction; the task may have ended.
   */
  restart(taskId: string, fromSeq: number, event: TaskEvent, summary: SummaryUpdate): StoredEvent;
  /** The task's events in order, streamed from the store (not held in memory). */
  events(taskId: string, afterSeq?: number): IterableIterator<StoredEvent>;
  /**
   * Events of the given types across all tasks, in order; with `ofTasksWith`, only from tasks
   * that have an event of that type (the routing history reads its outcomes this way).
   */
  eventsOfTypes(types: readonly TaskEventType[], ofTasksWith?: TaskEventType): IterableIterator<StoredEvent>;
  /** Events of all tasks after a global sequence number (live streams, replay). */
  eventsSince(afterSeq: number, limit: number): StoredEvent[];
  task(id: string): TaskSummary | undefined;
  tasks(filter?: TaskFilter): TaskSummary[];
  /**
   * Takes the task's lease unless a live process holds it. A shared store's leases expire unless
   * renewed (it renews the ones it took) and fence: once another process takes the lease over,
   * this store's appends and restarts for the task throw LeaseLostError.
   */
  tryLease(taskId: string, holder: LeaseHolder): boolean;
  releaseLease(taskId: string, holder: LeaseHolder): void;
  leaseHolder(taskId: string): LeaseHolder | null;
  /** The task's lease as recorded, even when its holder is gone (a `kill -9`); null when none is held. */
  lease(taskId: string): Lease | null;
  /** Closes a provider (a runtime, for every task) until `resetAt`; a later reset wins. */
  closeProvider(provider: string, resetAt: string): void;
  /**
   * The providers closed until a time after `now`. A window another process closed is seen once
   * this process has awaited something since its last call (the next stage always has).
   */
  closedProviders(now: Date): ProviderWindow[];
  /**
   * Calls `listener` when a lease this store took is lost (taken over, or not renewed in time),
   * possibly more than once for one loss; returns the unsubscribe. Only stores whose leases can be lost (PostgreSQL) have it.
   */
  onLeaseLost?(listener: (taskId: string) => void): () => void;
  /**
   * Whether the lease this store took on the task is still its own (not taken over, not expired),
   * asked before work the log cannot fence (git in a shared worktree); true when this store took
   * none. Only stores whose leases can be lost (PostgreSQL) have it.
   */
  holdsLease?(taskId: string): boolean;
  /**
   * Calls `listener` soon after any process appended events, with the highest new seq (null when
   * unknown: some may have been appended unseen); returns the unsubscribe. A reader of
   * `eventsSince` then need not poll. Only stores that are told (PostgreSQL: LISTEN/NOTIFY) have it.
   */
  onAppended?(listener: (seq: number | null) => void): () => void;
  /**
   * A lock shared by every process on the store, named by `key`, taken without waiting (true: this
   * process holds it now). Only a shared store has it (PostgreSQL: an advisory lock); the merge
   * lock of store/advisory-merge-lock.ts is built on it.
   */
  tryAdvisoryLock?(key: string): boolean;
  advisoryUnlock?(key: string): void;
  close(): void;
}

export interface ProviderWindow {
  provider: string;
  resetAt: string;
}

/** This process, as the holder of a task's lease. */
export function currentHolder(): LeaseHolder {
  return { pid: process.pid, host: hostname() };
}

/** A new task id (T-XXXXXX); the store checks it is not taken. */
export function newTaskId(): string {
  return `T-${randomBytes(3).toString('hex').toUpperCase()}`;
}

/** Whether a lease's holder still runs: one on another host is taken to be; on this host, its pid is checked. */
export function isHolderAlive(holder: LeaseHolder): boolean {
  if (holder.host !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
