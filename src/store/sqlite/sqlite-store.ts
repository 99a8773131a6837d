import { existsSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { NotFoundError, StateError } from '../../core/errors.js';
import {
  currentPidScope,
  type EventStore,
  isHolderAlive,
  isSameProcess,
  type Lease,
  type LeaseHolder,
  newTaskId,
  type ProviderWindow,
  type SummaryUpdate,
  type TaskFilter,
} from '../../core/event-store.js';
import { isTerminal, type StoredEvent, type TaskEvent, type TaskStatus } from '../../core/events.js';
import { ANY_ACCOUNT } from '../../core/provider-key.js';
import { type ClaimRow, issueClaimsOn } from '../issue-claims-sql.js';
import { type EventRow, type TaskRow, toStored, toSummary } from '../rows.js';
import { engineVersion, refuseNewerSchema } from '../schema-version.js';

const SCHEMA = `
-- the row is written when the status changes, not on every commit (that would cost one more page
-- of WAL each time): the summary reads the current agent and the updated time from the task's
-- events (summaryOf below); current_agent is left from older versions
CREATE TABLE IF NOT EXISTS tasks (
  id TEXT PRIMARY KEY,
  status TEXT NOT NULL,
  pipeline TEXT NOT NULL,
  input TEXT NOT NULL,
  current_agent TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  lease_pid INTEGER,
  lease_host TEXT
);
CREATE INDEX IF NOT EXISTS tasks_by_status ON tasks(status, created_at);
CREATE INDEX IF NOT EXISTS tasks_by_created ON tasks(created_at);
CREATE INDEX IF NOT EXISTS tasks_by_pipeline ON tasks(pipeline, created_at);
CREATE TABLE IF NOT EXISTS events (
  -- not AUTOINCREMENT: events are never deleted, so the rowid only grows, and each commit
  -- is spared the write to sqlite_sequence
  seq INTEGER PRIMARY KEY,
  task_id TEXT NOT NULL REFERENCES tasks(id),
  type TEXT NOT NULL,
  at TEXT NOT NULL,
  data TEXT NOT NULL,
  -- set when a restart sets the event aside: kept for audit, left out of the task's history
  superseded_by INTEGER
);
CREATE INDEX IF NOT EXISTS events_by_task ON events(task_id, seq);
CREATE TABLE IF NOT EXISTS provider_windows (
  provider TEXT PRIMARY KEY,
  reset_at TEXT NOT NULL
);
`;

/**
 * A task's summary row, with its live current agent (the agent of its last stage_started),
 * updated time (its last event) and issue (its task_created's), read from the events through
 * events_by_task. `from` is the
 * rows to summarise: the subqueries run once per row of it, so a list passes it the page alone.
 */
const summaryOf = (from: string) => `SELECT t.id, t.status, t.pipeline, t.input, t.created_at,
  (SELECT json_extract(e.data, '$.agent') FROM events e
   WHERE e.task_id = t.id AND e.type = 'stage_started' AND e.superseded_by IS NULL
   ORDER BY e.seq DESC LIMIT 1) AS current_agent,
  coalesce((SELECT e.at FROM events e WHERE e.task_id = t.id ORDER BY e.seq DESC LIMIT 1), t.updated_at) AS updated_at,
  (SELECT json_extract(e.data, '$.issue') FROM events e
   WHERE e.task_id = t.id AND e.type = 'task_created' ORDER BY e.seq LIMIT 1) AS issue
  FROM ${from} t`;

/**
 * The list query: the page is chosen first, newest first, through tasks_by_created (or
 * tasks_by_status, tasks_by_pipeline), and only its rows are summarised, so a list costs the
 * same with 10 tasks in the store or 10,000.
 */
export function taskListSql(filter: TaskFilter): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.status?.length) {
    where.push(`status IN (${filter.status.map(() => '?').join(', ')})`);
    params.push(...filter.status);
  }
  if (filter.pipeline !== undefined) {
    where.push('pipeline = ?');
    params.push(filter.pipeline);
  }
  const page = `(SELECT rowid AS rid, * FROM tasks ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
    ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?)`;
  return {
    sql: `${summaryOf(page)} ORDER BY t.created_at DESC, t.rid DESC`,
    params: [...params, filter.limit ?? -1, filter.offset ?? 0],
  };
}

export interface SqliteStoreOptions {
  /**
   * NORMAL (the default) in WAL mode survives any process crash (kill -9); only an OS crash can
   * lose the last commits. FULL waits for the disk at each commit, as PostgreSQL does by default
   * (bench/postgres.js compares the two stores at equal durability with it).
   */
  synchronous?: 'normal' | 'full';
  /** Open only a database file that is already there (a missing one is a NotFoundError, not a new file). */
  existing?: boolean;
}

export function openSqliteStore(file: string, options: SqliteStoreOptions = {}): EventStore {
  if (options.existing && !existsSync(file)) throw new NotFoundError(`no troupe store at ${file}`);
  mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file, { fileMustExist: options.existing === true });
  try {
    refuseNewerSchema(db.pragma('user_version', { simple: true }) as number, SQLITE_SCHEMA_VERSION, file);
  } catch (error) {
    db.close();
    throw error;
  }
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.exec(SCHEMA);
  migrate(db);

  const insertTask = db.prepare(
    'INSERT INTO tasks (id, status, pipeline, input, current_agent, created_at, updated_at) VALUES (?, ?, ?, ?, NULL, ?, ?)',
  );
  const insertEvent = db.prepare(
    'INSERT INTO events (task_id, type, at, data, engine) VALUES (?, ?, ?, ?, ?)',
  );
  const engine = engineVersion();
  const selectTask = db.prepare<[string], TaskRow>(`${summaryOf('tasks')} WHERE t.id = ?`);
  const selectStatus = db.prepare<[string], { status: TaskStatus }>('SELECT status FROM tasks WHERE id = ?');
  const updateTask = db.prepare('UPDATE tasks SET status = ?, updated_at = ? WHERE id = ?');
  const selectEvents = db.prepare<[string, number], EventRow>(
    'SELECT seq, task_id, at, data, engine FROM events WHERE task_id = ? AND seq > ? AND superseded_by IS NULL ORDER BY seq',
  );
  const selectSince = db.prepare<[number, number], EventRow>(
    'SELECT seq, task_id, at, data, engine FROM events WHERE seq > ? AND superseded_by IS NULL ORDER BY seq LIMIT ?',
  );
  const selectLease = db.prepare<[string], LeaseRow>(
    'SELECT lease_pid, lease_host, lease_boot_id, lease_pid_ns FROM tasks WHERE id = ?',
  );
  const leaseOf = (taskId: string): Lease | null => {
    const row = selectLease.get(taskId);
    if (!row || row.lease_pid === null) return null;
    const holder = holderOf(row);
    return { holder, alive: isHolderAlive(holder) };
  };
  const setLease = db.prepare(
    'UPDATE tasks SET lease_pid = ?, lease_host = ?, lease_boot_id = ?, lease_pid_ns = ? WHERE id = ?',
  );
  const clearLease = db.prepare(
    `UPDATE tasks SET lease_pid = NULL, lease_host = NULL, lease_boot_id = NULL, lease_pid_ns = NULL
     WHERE id = ? AND lease_pid = ? AND lease_host = ? AND lease_boot_id IS ? AND lease_pid_ns IS ?`,
  );
  const upsertWindow = db.prepare(
    `INSERT INTO provider_windows (provider, reset_at) VALUES (?, ?)
     ON CONFLICT(provider) DO UPDATE SET reset_at = max(reset_at, excluded.reset_at)`,
  );
  // read before every stage (twice): kept in memory until this connection closes a window or
  // another connection commits anything (data_version changes), which is cheaper than the SELECT;
  // asked again before anything was awaited (so no other task of this process ran in between),
  // the answer comes from memory without even reading data_version
  const selectWindows = db.prepare<[], { provider: string; reset_at: string }>(
    'SELECT provider, reset_at FROM provider_windows ORDER BY provider',
  );
  const claims = issueClaimsOn((sql, params) => db.prepare<unknown[], ClaimRow>(sql).all(...params));
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  let windows: ProviderWindow[] | null = null;
  let windowsVersion = -1;
  let windowsCheckedThisTurn = false;
  const checkWindows = () => {
    const version = dataVersion.get()!;
    if (windows === null || version !== windowsVersion) {
      windows = selectWindows.all().map((row) => ({ provider: row.provider, resetAt: row.reset_at }));
      windowsVersion = version;
    }
    windowsCheckedThisTurn = true;
    queueMicrotask(() => {
      windowsCheckedThisTurn = false;
    });
    return windows;
  };

  const write = (taskId: string, event: TaskEvent, at: string): StoredEvent => {
    const info = insertEvent.run(taskId, event.type, at, JSON.stringify(event), engine);
    return { ...event, seq: Number(info.lastInsertRowid), taskId, at, engine } as StoredEvent;
  };

  const createTask = db.transaction((event: Extract<TaskEvent, { type: 'task_created' }>): StoredEvent => {
    const at = new Date().toISOString();
    let id = newTaskId();
    while (selectStatus.get(id)) id = newTaskId();
    insertTask.run(id, 'pending', event.pipeline, event.input, at, at);
    return write(id, event, at);
  });

  const append = db.transaction(
    (taskId: string, events: TaskEvent[], summary: SummaryUpdate, when?: string): StoredEvent[] => {
      const row = selectStatus.get(taskId);
      if (!row) throw new NotFoundError(`no task ${taskId}`);
      if (isTerminal(row.status))
        throw new StateError(
          `task ${taskId} has already ${row.status === 'cancelled' ? 'been cancelled' : row.status}`,
        );
      const at = when ?? new Date().toISOString();
      const stored = events.map((event) => write(taskId, event, at));
      if (summary.status !== row.status) updateTask.run(summary.status, at, taskId);
      return stored;
    },
  );

  const supersede = db.prepare(
    'UPDATE events SET superseded_by = ? WHERE task_id = ? AND seq >= ? AND seq < ? AND superseded_by IS NULL',
  );
  const restart = db.transaction(
    (taskId: string, fromSeq: number, event: TaskEvent, summary: SummaryUpdate): StoredEvent => {
      if (!selectStatus.get(taskId)) throw new NotFoundError(`no task ${taskId}`);
      const at = new Date().toISOString();
      const stored = write(taskId, event, at);
      supersede.run(stored.seq, taskId, fromSeq, stored.seq);
      updateTask.run(summary.status, at, taskId);
      return stored;
    },
  );

  const tryLease = db.transaction((taskId: string, holder: LeaseHolder): boolean => {
    const row = selectLease.get(taskId);
    if (!row) throw new NotFoundError(`no task ${taskId}`);
    if (row.lease_pid !== null) {
      const current = holderOf(row);
      if (!isSameProcess(current, holder) && isHolderAlive(current)) return false;
    }
    setLease.run(holder.pid, holder.host, holder.bootId ?? null, holder.pidNamespace ?? null, taskId);
    return true;
  });

  // Writes begin IMMEDIATE: a transaction that reads first and writes later cannot wait for
  // another process's write (SQLite answers SQLITE_BUSY at once), so it takes the write lock up
  // front and lets busy_timeout do the waiting.
  return {
    createTask: (event) => createTask.immediate(event),
    append: (taskId, events, summary, at) => append.immediate(taskId, events, summary, at),
    restart: (taskId, fromSeq, event, summary) => restart.immediate(taskId, fromSeq, event, summary),
    *events(taskId, afterSeq = 0) {
      for (const row of selectEvents.iterate(taskId, afterSeq)) yield toStored(row);
    },
    eventsSince: (afterSeq, limit) => selectSince.all(afterSeq, limit).map(toStored),
    *eventsOfTypes(types, ofTasksWith) {
      const list = types.map(() => '?').join(', ');
      const tasks = ofTasksWith
        ? 'AND task_id IN (SELECT DISTINCT task_id FROM events WHERE type = ? AND superseded_by IS NULL)'
        : '';
      const rows = db
        .prepare<unknown[], EventRow>(
          `SELECT seq, task_id, at, data, engine FROM events WHERE type IN (${list}) ${tasks} AND superseded_by IS NULL ORDER BY seq`,
        )
        .iterate(...types, ...(ofTasksWith ? [ofTasksWith] : []));
      for (const row of rows) yield toStored(row);
    },
    task(id) {
      const row = selectTask.get(id);
      return row ? toSummary(row) : undefined;
    },
    tasks(filter: TaskFilter = {}) {
      const { sql, params } = taskListSql(filter);
      return db
        .prepare<unknown[], TaskRow>(sql)
        .all(...params)
        .map(toSummary);
    },
    tryLease: (taskId, holder) => tryLease.immediate(taskId, holder),
    releaseLease(taskId, holder) {
      clearLease.run(taskId, holder.pid, holder.host, holder.bootId ?? null, holder.pidNamespace ?? null);
    },
    leaseHolder(taskId) {
      const lease = leaseOf(taskId);
      return lease?.alive ? lease.holder : null;
    },
    lease: leaseOf,
    closeProvider(provider, resetAt) {
      upsertWindow.run(provider, resetAt);
      windows = null;
    },
    closedProviders(now) {
      const known = windows !== null && windowsCheckedThisTurn ? windows : checkWindows();
      const at = now.toISOString();
      return known.filter((w) => w.resetAt > at);
    },
    ...claims,
    close: () => db.close(),
  };
}

interface LeaseRow {
  lease_pid: number | null;
  lease_host: string | null;
  lease_boot_id: string | null;
  lease_pid_ns: string | null;
}

const holderOf = (row: LeaseRow): LeaseHolder => ({
  pid: row.lease_pid!,
  host: row.lease_host ?? '',
  ...(row.lease_boot_id ? { bootId: row.lease_boot_id } : {}),
  ...(row.lease_pid_ns ? { pidNamespace: row.lease_pid_ns } : {}),
});

/** The last step migrate() knows: a store past it was migrated by a newer troupe, and is refused. */
export const SQLITE_SCHEMA_VERSION = 4;

/**
 * Brings a store written by an older troupe up to this schema (`user_version` counts the steps).
 * Several troupes may open one file at once: the steps run in one IMMEDIATE transaction that reads
 * the version again once it holds the write lock, so a troupe that read an old version before
 * another one migrated never runs a step twice (or writes an older version back).
 */
function migrate(db: Database.Database): void {
  if (upToDate(db)) return;
  db.transaction(() => {
    if (!hasColumn(db, 'events', 'superseded_by'))
      db.exec('ALTER TABLE events ADD COLUMN superseded_by INTEGER');
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version < 1) {
      // windows were keyed by runtime name and closed all of it: they now say so (`claude*`, see
      // core/provider-key.ts), and a bare name is one provider key like any other
      db.exec(
        `UPDATE provider_windows SET provider = provider || '${ANY_ACCOUNT}' WHERE provider NOT GLOB '*[@#*]*'`,
      );
    }
    if (version < 2) {
      // the lease holder's pid scope (core/event-store.ts isHolderAlive), and the troupe that wrote
      // each event. A lease an older troupe took on this host is given this process's scope: the
      // file is on this machine, and without a scope its holder would count as alive for good (SQLite
      // leases do not expire), so a task whose troupe died before the upgrade could never be resumed
      const scope = currentPidScope();
      db.exec(`ALTER TABLE tasks ADD COLUMN lease_boot_id TEXT;
        ALTER TABLE tasks ADD COLUMN lease_pid_ns TEXT;
        ALTER TABLE events ADD COLUMN engine TEXT;`);
      db.prepare(
        'UPDATE tasks SET lease_boot_id = ?, lease_pid_ns = ? WHERE lease_pid IS NOT NULL AND lease_host = ?',
      ).run(scope.bootId ?? null, scope.pidNamespace ?? null, hostname());
    }
    if (version < 3) {
      // tracker issues `troupe watch` holds (core/event-store.ts IssueClaim): one row an issue
      db.exec(`CREATE TABLE IF NOT EXISTS issue_claims (
        source TEXT NOT NULL,
        issue_id TEXT NOT NULL,
        task_id TEXT,
        attempts INTEGER NOT NULL DEFAULT 0,
        retry_at TEXT,
        comment_id TEXT,
        claimed_at TEXT NOT NULL,
        PRIMARY KEY (source, issue_id)
      )`);
    }
    if (version < 4 && !hasColumn(db, 'issue_claims', 'pull_request')) {
      // the pull request a watched issue's task ended at, so no watcher opens or links it twice
      db.exec('ALTER TABLE issue_claims ADD COLUMN pull_request TEXT');
    }
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
  }).immediate();
}

function upToDate(db: Database.Database): boolean {
  return (
    (db.pragma('user_version', { simple: true }) as number) >= SQLITE_SCHEMA_VERSION &&
    hasColumn(db, 'events', 'superseded_by')
  );
}

function hasColumn(db: Database.Database, table: string, column: string): boolean {
  return db
    .prepare<[], { name: string }>(`PRAGMA table_info(${table})`)
    .all()
    .some((c) => c.name === column);
}
