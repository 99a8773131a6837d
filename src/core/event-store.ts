import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import type { EventOf, StoredEvent, TaskEvent, TaskEventType, TaskStatus } from './events.js';
import type { TaskIssueRef } from './tracker.js';

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
  /** The tracker issue the task works on, as its `task_created` records it; null when none. */
  issue: TaskIssueRef | null;
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
  /**
   * The boot of the machine the pid is on, and the PID namespace it is in (Linux: the kernel's
   * boot_id and `pid:[…]` of /proc/self/ns/pid; undefined elsewhere or when unreadable). Together
   * with the host they say whether the pid means the same process to whoever reads it.
   */
  bootId?: string;
  pidNamespace?: string;
  /** Which worker of the process, when one process runs several (`troupe worker`). */
  worker?: string;
}

/** A task's lease as recorded, and whether its holder still runs (one that died, or whose lease expired, does not). */
export interface Lease {
  holder: LeaseHolder;
  alive: boolean;
}

/**
 * A tracker issue held by `troupe watch` (keyed by the tracker's source and the issue's id), so
 * that every watcher on the store starts it once. `taskId` is null between the claim and the
 * creation of its task, a moment; a claim left so for PENDING_CLAIM_TTL_MS (its watcher died in
 * between) may be taken again.
 */
export interface IssueClaim {
  source: string;
  issueId: string;
  taskId: string | null;
  /** Tries that failed so far. */
  attempts: number;
  /** When the failed task is tried again (ISO); null: no retry planned. */
  retryAt: string | null;
  /** The issue's progress comment (Tracker.upsertComment), once posted. */
  commentId: string | null;
  /** The pull request opened for its completed task and linked to the issue (`pull_request:`), once done. */
  pullRequest: string | null;
  claimedAt: string;
}

export interface IssueClaimChange {
  taskId?: string;
  attempts?: number;
  retryAt?: string | null;
  commentId?: string | null;
  pullRequest?: string | null;
}

export const PENDING_CLAIM_TTL_MS = 10 * 60_000;

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
  /**
   * Takes the issue unless someone holds it (a claim with a task, or a pending one younger than
   * PENDING_CLAIM_TTL_MS): the new claim, or null when refused. Atomic across processes.
   */
  claimIssue(source: string, issueId: string, now: Date): IssueClaim | null;
  /**
   * Changes a claim; with `ifRetryAt`, only while its retry time is that one (so of two watchers
   * that both see a retry due, one takes it). Whether a claim was changed.
   */
  updateIssueClaim(
    source: string,
    issueId: string,
    change: IssueClaimChange,
    ifRetryAt?: string | null,
  ): boolean;
  releaseIssue(source: string, issueId: string): void;
  /** The claims of one tracker, oldest first. */
  issueClaims(source: string): IssueClaim[];
  close(): void;
}

export interface ProviderWindow {
  provider: string;
  resetAt: string;
}

/** Where this process's pid means something: its machine's boot and its PID namespace. */
export interface PidScope {
  bootId?: string;
  pidNamespace?: string;
}

let ownScope: PidScope | undefined;

/** This process's PidScope, read once (the files exist on Linux only). */
export function currentPidScope(): PidScope {
  if (!ownScope) {
    const bootId = readOrUndefined(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
    const pidNamespace = readOrUndefined(() => readlinkSync('/proc/self/ns/pid'));
    ownScope = { ...(bootId ? { bootId } : {}), ...(pidNamespace ? { pidNamespace } : {}) };
  }
  return ownScope;
}

function readOrUndefined(read: () => string): string | undefined {
  try {
    return read() || undefined;
  } catch {
    return undefined;
  }
}

/** This process, as the holder of a task's lease. */
export function currentHolder(): LeaseHolder {
  return { pid: process.pid, host: hostname(), ...currentPidScope() };
}

/** Whether two holders are the same process: one pid names one process only within one scope. */
export function isSameProcess(a: LeaseHolder, b: LeaseHolder): boolean {
  return a.pid === b.pid && a.host === b.host && a.bootId === b.bootId && a.pidNamespace === b.pidNamespace;
}

/** A new task id (T-XXXXXX); the store checks it is not taken. */
export function newTaskId(): string {
  return `T-${randomBytes(3).toString('hex').toUpperCase()}`;
}

/**
 * Whether a lease's holder still runs. Its pid is checked only when it provably names a process
 * this one can see: the same host, the same boot and the same PID namespace as this process.
 * Otherwise (another machine, a container with its own PIDs under a shared hostname, a holder
 * recorded without its scope by an older troupe) it is taken to run: its lease then ends when
 * it expires (PostgreSQL) or is released. Where the platform has neither (not Linux), host and
 * pid are all there is, and both sides recorded no scope.
 */
export function isHolderAlive(holder: LeaseHolder): boolean {
  if (!pidIsVisibleHere(holder)) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function pidIsVisibleHere(holder: LeaseHolder): boolean {
  const own = currentPidScope();
  if (process.platform === 'linux' && (!own.bootId || !own.pidNamespace)) return false;
  return (
    holder.host === hostname() && holder.bootId === own.bootId && holder.pidNamespace === own.pidNamespace
  );
}
