import { NotFoundError, StateError } from '../core/errors.js';
import {
  type EventStore,
  type IssueClaim,
  isHolderAlive,
  isSameProcess,
  type LeaseHolder,
  newTaskId,
  PENDING_CLAIM_TTL_MS,
  type ProviderWindow,
  type TaskSummary,
} from '../core/event-store.js';
import { isTerminal, type StoredEvent, type TaskEvent, type TaskStatus } from '../core/events.js';

/**
 * An event store in this process's memory: for tests of the engine without SQLite, and the second
 * implementation store/contract.ts runs against. Events are kept as JSON and parsed on every read,
 * as a database hands back new objects, so the fold's in-place changes never reach the log.
 */

interface Row {
  seq: number;
  taskId: string;
  at: string;
  data: string;
  /** Set aside by a restart: kept, but no longer part of the task's history. */
  superseded: boolean;
}

interface TaskRow {
  summary: Omit<TaskSummary, 'currentAgent' | 'updated'>;
  updated: string;
  lease: LeaseHolder | null;
  rows: Row[];
}

export function openMemoryStore(): EventStore {
  const tasks = new Map<string, TaskRow>();
  const log: Row[] = [];
  const windows = new Map<string, string>();
  const claims = new Map<string, IssueClaim>();
  const claimKey = (source: string, issueId: string) => JSON.stringify([source, issueId]);

  const taskRow = (id: string): TaskRow => {
    const task = tasks.get(id);
    if (!task) throw new NotFoundError(`no task ${id}`);
    return task;
  };

  const write = (task: TaskRow, event: TaskEvent, at: string): StoredEvent => {
    const row = {
      seq: log.length + 1,
      taskId: task.summary.id,
      at,
      data: JSON.stringify(event),
      superseded: false,
    };
    log.push(row);
    task.rows.push(row);
    return toStored(row);
  };

  const setStatus = (task: TaskRow, status: TaskStatus, at: string) => {
    if (task.summary.status === status) return;
    task.summary.status = status;
    task.updated = at;
  };

  const summaryOf = (task: TaskRow): TaskSummary => {
    let currentAgent: string | null = null;
    for (let i = task.rows.length - 1; i >= 0 && currentAgent === null; i--) {
      const row = task.rows[i]!;
      if (row.superseded) continue;
      const event = toStored(row);
      if (event.type === 'stage_started') currentAgent = event.agent;
    }
    const { issue } = task.summary;
    return {
      ...task.summary,
      currentAgent,
      updated: task.rows.at(-1)?.at ?? task.updated,
      // a copy, as a database hands back: changing what was read changes nothing stored
      issue: issue && { ...issue },
    };
  };

  return {
    createTask(event) {
      const at = new Date().toISOString();
      let id = newTaskId();
      while (tasks.has(id)) id = newTaskId();
      const task: TaskRow = {
        summary: {
          id,
          status: 'pending',
          pipeline: event.pipeline,
          input: event.input,
          created: at,
          issue: event.issue ? { ...event.issue } : null,
        },
        updated: at,
        lease: null,
        rows: [],
      };
      tasks.set(id, task);
      return write(task, event, at);
    },
    append(taskId, events, summary, when) {
      const task = taskRow(taskId);
      const { status } = task.summary;
      if (isTerminal(status))
        throw new StateError(
          `task ${taskId} has already ${status === 'cancelled' ? 'been cancelled' : status}`,
        );
      const at = when ?? new Date().toISOString();
      const stored = events.map((event) => write(task, event, at));
      setStatus(task, summary.status, at);
      return stored;
    },
    restart(taskId, fromSeq, event, summary) {
      const task = taskRow(taskId);
      const at = new Date().toISOString();
      for (const row of task.rows) if (row.seq >= fromSeq) row.superseded = true;
      const stored = write(task, event, at);
      task.summary.status = summary.status;
      task.updated = at;
      return stored;
    },
    *events(taskId, afterSeq = 0) {
      const rows = tasks.get(taskId)?.rows ?? [];
      for (const row of rows.slice()) if (row.seq > afterSeq && !row.superseded) yield toStored(row);
    },
    *eventsOfTypes(types, ofTasksWith) {
      const wanted = new Set<string>(types);
      const withType = (row: Row) => !row.superseded && toStored(row).type === ofTasksWith;
      const ofTasks = ofTasksWith
        ? new Set([...tasks.values()].filter((t) => t.rows.some(withType)).map((t) => t.summary.id))
        : null;
      for (const row of log.slice()) {
        if (row.superseded || (ofTasks && !ofTasks.has(row.taskId))) continue;
        const event = toStored(row);
        if (wanted.has(event.type)) yield event;
      }
    },
    eventsSince(afterSeq, limit) {
      return log
        .slice(afterSeq)
        .filter((row) => !row.superseded)
        .slice(0, limit)
        .map(toStored);
    },
    task(id) {
      const task = tasks.get(id);
      return task ? summaryOf(task) : undefined;
    },
    tasks(filter = {}) {
      const statuses = filter.status?.length ? new Set(filter.status) : null;
      // newest first; tasks created in the same millisecond, the later one first
      const listed = [...tasks.values()]
        .reverse()
        .sort((a, b) =>
          a.summary.created < b.summary.created ? 1 : a.summary.created > b.summary.created ? -1 : 0,
        )
        .filter(
          (t) =>
            (!statuses || statuses.has(t.summary.status)) &&
            (filter.pipeline === undefined || t.summary.pipeline === filter.pipeline),
        );
      const from = filter.offset ?? 0;
      return listed.slice(from, filter.limit === undefined ? undefined : from + filter.limit).map(summaryOf);
    },
    tryLease(taskId, holder) {
      const task = taskRow(taskId);
      const lease = task.lease;
      const held = lease !== null && !isSameProcess(lease, holder);
      if (held && isHolderAlive(lease)) return false;
      task.lease = { ...holder };
      return true;
    },
    releaseLease(taskId, holder) {
      const task = tasks.get(taskId);
      if (task?.lease && isSameProcess(task.lease, holder)) task.lease = null;
    },
    leaseHolder(taskId) {
      const lease = tasks.get(taskId)?.lease ?? null;
      return lease && isHolderAlive(lease) ? { ...lease } : null;
    },
    lease(taskId) {
      const lease = tasks.get(taskId)?.lease ?? null;
      return lease && { holder: { ...lease }, alive: isHolderAlive(lease) };
    },
    closeProvider(provider, resetAt) {
      const known = windows.get(provider);
      if (!known || resetAt > known) windows.set(provider, resetAt);
    },
    closedProviders(now) {
      const at = now.toISOString();
      const closed: ProviderWindow[] = [];
      for (const [provider, resetAt] of windows) if (resetAt > at) closed.push({ provider, resetAt });
      return closed.sort((a, b) => (a.provider < b.provider ? -1 : 1));
    },
    claimIssue(source, issueId, now) {
      const key = claimKey(source, issueId);
      const held = claims.get(key);
      const stale = new Date(now.getTime() - PENDING_CLAIM_TTL_MS).toISOString();
      if (held && (held.taskId !== null || held.claimedAt > stale)) return null;
      const claim: IssueClaim = {
        source,
        issueId,
        taskId: null,
        attempts: 0,
        retryAt: null,
        commentId: null,
        pullRequest: null,
        claimedAt: now.toISOString(),
      };
      claims.set(key, claim);
      return { ...claim };
    },
    updateIssueClaim(source, issueId, change, ifRetryAt) {
      const claim = claims.get(claimKey(source, issueId));
      if (!claim || (ifRetryAt !== undefined && claim.retryAt !== ifRetryAt)) return false;
      Object.assign(claim, change);
      return true;
    },
    releaseIssue(source, issueId) {
      claims.delete(claimKey(source, issueId));
    },
    issueClaims(source) {
      return [...claims.values()]
        .filter((c) => c.source === source)
        .sort((a, b) => (a.claimedAt < b.claimedAt ? -1 : a.claimedAt > b.claimedAt ? 1 : 0))
        .map((c) => ({ ...c }));
    },
    close() {},
  };
}

function toStored(row: Row): StoredEvent {
  const event = JSON.parse(row.data) as StoredEvent;
  event.seq = row.seq;
  event.taskId = row.taskId;
  event.at = row.at;
  return event;
}
