import type { TaskSummary } from '../core/event-store.js';
import type { StoredEvent, TaskStatus } from '../core/events.js';
import type { TaskIssueRef } from '../core/tracker.js';

/** A task's summary as the SQL stores read it (SQLite and PostgreSQL alike). */
export interface TaskRow {
  id: string;
  status: TaskStatus;
  pipeline: string;
  input: string;
  current_agent: string | null;
  created_at: string;
  updated_at: string;
  /** The `issue` of the task's `task_created`, as JSON text (null: none). */
  issue: string | null;
}

/** An event as the SQL stores keep it: its JSON, and the columns the store sets. */
export interface EventRow {
  seq: number;
  task_id: string;
  at: string;
  data: string;
  /** The troupe version that appended it (null: one from before it was recorded). */
  engine?: string | null;
}

// the parsed object is new: completed in place rather than copied (every resume reads the whole log)
export function toStored(row: EventRow): StoredEvent {
  const event = JSON.parse(row.data) as StoredEvent;
  event.seq = row.seq;
  event.taskId = row.task_id;
  event.at = row.at;
  if (row.engine) event.engine = row.engine;
  return event;
}

export function toSummary(row: TaskRow): TaskSummary {
  return {
    id: row.id,
    status: row.status,
    pipeline: row.pipeline,
    input: row.input,
    currentAgent: row.current_agent,
    created: row.created_at,
    updated: row.updated_at,
    issue: row.issue ? (JSON.parse(row.issue) as TaskIssueRef) : null,
  };
}
