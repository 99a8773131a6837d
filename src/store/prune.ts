import Database from 'better-sqlite3';
import { type TaskStatus, TERMINAL_STATUSES } from '../core/events.js';
import { SEQ_LOCK } from './postgres/migrations.js';
import { connectPostgres, requireTables, storeError } from './postgres/postgres-store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { StoreLocation } from './store-url.js';

/** A finished task `troupe db prune` deletes (or, with --dry-run, would). */
export interface PrunedTask {
  id: string;
  status: TaskStatus;
  pipeline: string;
  /** When its last event was appended. */
  updated: string;
}

export interface PruneOptions {
  /** Tasks whose last event is older than this (an ISO time) go. */
  before: string;
  dryRun?: boolean;
}

/** Tasks deleted per transaction: the store's writers wait for one batch at most. */
const BATCH = 500;

/**
 * Deletes the finished tasks (completed, failed, cancelled) whose last event is older than
 * `before`, with everything the store keeps for them (events, set-aside events included, and
 * leases); an unfinished task is never touched, however old. Returns them, oldest first.
 */
export function pruneTasks(location: StoreLocation, options: PruneOptions): PrunedTask[] {
  return location.kind === 'sqlite' ? pruneSqlite(location.file, options) : prunePostgres(location, options);
}

const terminal = TERMINAL_STATUSES.map((status) => `'${status}'`).join(', ');

function pruneSqlite(file: string, { before, dryRun }: PruneOptions): PrunedTask[] {
  // opened once as a store: a missing file is an error, an older schema is migrated, a newer one refused
  openSqliteStore(file, { existing: true }).close();
  const db = new Database(file);
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  try {
    // the task holding the store's last event is kept: seqs are rowids there, and once it went
    // the next event would take its seq again, which a live reader has already seen
    const select = db.prepare<[string, number], PrunedTask>(
      `SELECT id, status, pipeline, updated FROM (
         SELECT t.id, t.status, t.pipeline, t.created_at,
           coalesce((SELECT e.at FROM events e WHERE e.task_id = t.id ORDER BY e.seq DESC LIMIT 1), t.updated_at) AS updated
         FROM tasks t WHERE t.status IN (${terminal})
           AND t.id IS NOT (SELECT task_id FROM events ORDER BY seq DESC LIMIT 1))
       WHERE updated < ? ORDER BY updated, id LIMIT ?`,
    );
    if (dryRun) return select.all(before, -1);
    const deleteEvents = db.prepare('DELETE FROM events WHERE task_id = ?');
    const deleteTask = db.prepare('DELETE FROM tasks WHERE id = ?');
    const batch = db.transaction(() => {
      const tasks = select.all(before, BATCH);
      for (const task of tasks) {
        deleteEvents.run(task.id);
        deleteTask.run(task.id);
      }
      return tasks;
    });
    const pruned: PrunedTask[] = [];
    for (;;) {
      const tasks = batch.immediate();
      pruned.push(...tasks);
      if (tasks.length < BATCH) return pruned;
    }
  } finally {
    db.close();
  }
}

function prunePostgres(
  location: Extract<StoreLocation, { kind: 'postgres' }>,
  { before, dryRun }: PruneOptions,
): PrunedTask[] {
  const db = connectPostgres(location.url, { schema: location.schema });
  // ISO times compare as text, byte by byte (whatever the database's collation)
  const select = `SELECT id, status, pipeline, updated_at AS updated FROM tasks
    WHERE status IN (${terminal}) AND updated_at COLLATE "C" < $1 ORDER BY updated_at COLLATE "C", id LIMIT $2`;
  try {
    // a schema without troupe's tables is an error, a newer one refused
    requireTables(db, location.url, location.schema);
    if (dryRun) return db.query<PrunedTask>(select, [before, null]);
    const pruned: PrunedTask[] = [];
    for (;;) {
      const tasks = db.transaction(() => {
        // the store's write lock (migrations.ts SEQ_LOCK): no restart brings a task back to life
        // between its choice here and its deletion
        db.query(`SELECT ${SEQ_LOCK}`);
        const chosen = db.query<PrunedTask>(select, [before, BATCH]);
        const ids = chosen.map((task) => task.id);
        db.query('DELETE FROM events WHERE task_id = ANY($1)', [ids]);
        db.query('DELETE FROM leases WHERE task_id = ANY($1)', [ids]);
        db.query('DELETE FROM tasks WHERE id = ANY($1)', [ids]);
        return chosen;
      });
      pruned.push(...tasks);
      if (tasks.length < BATCH) return pruned;
    }
  } catch (error) {
    throw storeError(error, location.url);
  } finally {
    db.close();
  }
}
