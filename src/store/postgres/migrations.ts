import { refuseNewerSchema } from '../schema-version.js';
import type { SyncPg } from './sync-client.js';

/**
 * The PostgreSQL schema, as numbered steps: each is applied once, in order, and never changed
 * after it shipped (a change is a new step). `schema_migrations` records which ones ran.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

// every write takes this transaction-scoped lock first: a seq is then handed out in the order its
// transaction commits, so a reader of `eventsSince` never sees seq N+1 before N (which it would then
// pass over for good); and as writes are one at a time, the task's status read after it is current
// until the commit (no row lock needed)
export const SEQ_LOCK = `pg_advisory_xact_lock(7451, hashtext(current_schema()))`;

const FENCE = `
  IF p_epoch IS NOT NULL AND NOT EXISTS (
    -- FOR SHARE: a takeover (tryLease's UPDATE) waits for this write to commit, so the new holder
    -- reads it; one that committed first moved the epoch on, and this write is refused
    SELECT 1 FROM leases WHERE task_id = p_task AND epoch = p_epoch AND expires_at > now() FOR SHARE
  ) THEN
    RAISE EXCEPTION 'the lease of task % was lost (another worker took it over, or it expired): nothing more is recorded from here', p_task
      USING ERRCODE = 'TR423';
  END IF;`;

// from migration 3: the lease is checked under the write lock, which takeovers take too (see
// troupe_take_lease), rather than with a row lock
const LEASE_CHECK = `
  IF p_epoch IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM leases WHERE task_id = p_task AND epoch = p_epoch AND expires_at > now()
  ) THEN
    RAISE EXCEPTION 'the lease of task % was lost (another worker took it over, or it expired): nothing more is recorded from here', p_task
      USING ERRCODE = 'TR423';
  END IF;`;

// in the writing transaction, so it is delivered when (and only if) the events commit
const NOTIFY = (seq: string) => `PERFORM pg_notify(troupe_events_channel(current_schema()), (${seq})::text);`;

// the append's steps that migrations 3 and 5 share: the events inserted in order, their seqs in
// v_seqs; the refusal of a task that ended (v_status)
const INSERT_EVENTS = `WITH written AS (
    INSERT INTO events (task_id, type, at, data)
      SELECT p_task, u.type, p_at, u.data FROM unnest(p_types, p_data) WITH ORDINALITY AS u(type, data, n)
      ORDER BY u.n RETURNING seq)
  SELECT array_agg(seq ORDER BY seq) INTO v_seqs FROM written;`;
const ENDED = `RAISE EXCEPTION 'task % has already %', p_task,
      CASE v_status WHEN 'cancelled' THEN 'been cancelled' ELSE v_status END USING ERRCODE = 'TR409';`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tasks, events, leases, provider windows',
    sql: `
CREATE TABLE tasks (
  id text PRIMARY KEY,
  -- the order tasks were created in, for a stable list among equal created_at
  ord bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
  status text NOT NULL,
  pipeline text NOT NULL,
  input text NOT NULL,
  created_at text NOT NULL,
  updated_at text NOT NULL
);
CREATE INDEX tasks_by_created ON tasks (created_at DESC, ord DESC);
CREATE INDEX tasks_by_status ON tasks (status, created_at DESC, ord DESC);
CREATE INDEX tasks_by_pipeline ON tasks (pipeline, created_at DESC, ord DESC);

CREATE TABLE events (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  task_id text NOT NULL REFERENCES tasks (id),
  type text NOT NULL,
  at text NOT NULL,
  data text NOT NULL,
  -- set when a restart sets the event aside: kept for audit, left out of the task's history
  superseded_by bigint
);
CREATE INDEX events_by_task ON events (task_id, seq);
CREATE INDEX events_by_type ON events (type, seq);

-- a released lease keeps its row: the epoch only ever rises, so a stale holder never matches again
CREATE TABLE leases (
  task_id text PRIMARY KEY REFERENCES tasks (id),
  pid integer,
  host text,
  worker text,
  epoch bigint NOT NULL,
  expires_at timestamptz NOT NULL
);

CREATE TABLE provider_windows (
  provider text PRIMARY KEY,
  reset_at text NOT NULL
);

-- the writes, one statement each: the checks (task exists, not ended, lease still held) are
-- made by the database in the writing transaction, not by the caller beforehand

CREATE FUNCTION troupe_create_task(p_id text, p_pipeline text, p_input text, p_type text, p_data text, p_at text)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE v_seq bigint;
BEGIN
  INSERT INTO tasks (id, status, pipeline, input, created_at, updated_at)
    VALUES (p_id, 'pending', p_pipeline, p_input, p_at, p_at) ON CONFLICT (id) DO NOTHING;
  IF NOT FOUND THEN RETURN NULL; END IF;
  PERFORM ${SEQ_LOCK};
  INSERT INTO events (task_id, type, at, data) VALUES (p_id, p_type, p_at, p_data) RETURNING seq INTO v_seq;
  RETURN v_seq;
END $$;

CREATE FUNCTION troupe_append(p_task text, p_types text[], p_data text[], p_at text, p_status text, p_epoch bigint)
RETURNS SETOF bigint LANGUAGE plpgsql AS $$
DECLARE v_status text;
BEGIN
  PERFORM ${SEQ_LOCK};
  SELECT status INTO v_status FROM tasks WHERE id = p_task;
  IF NOT FOUND THEN RAISE EXCEPTION 'no task %', p_task USING ERRCODE = 'TR404'; END IF;
  ${FENCE}
  IF v_status IN ('completed', 'failed', 'cancelled') THEN
    RAISE EXCEPTION 'task % has already %', p_task,
      CASE v_status WHEN 'cancelled' THEN 'been cancelled' ELSE v_status END USING ERRCODE = 'TR409';
  END IF;
  RETURN QUERY INSERT INTO events (task_id, type, at, data)
    SELECT p_task, u.type, p_at, u.data FROM unnest(p_types, p_data) WITH ORDINALITY AS u(type, data, n)
    ORDER BY u.n RETURNING seq;
  IF p_status <> v_status THEN UPDATE tasks SET status = p_status, updated_at = p_at WHERE id = p_task; END IF;
END $$;

CREATE FUNCTION troupe_restart(p_task text, p_from bigint, p_type text, p_data text, p_at text, p_status text, p_epoch bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE v_seq bigint;
BEGIN
  PERFORM ${SEQ_LOCK};
  PERFORM 1 FROM tasks WHERE id = p_task;
  IF NOT FOUND THEN RAISE EXCEPTION 'no task %', p_task USING ERRCODE = 'TR404'; END IF;
  ${FENCE}
  INSERT INTO events (task_id, type, at, data) VALUES (p_task, p_type, p_at, p_data) RETURNING seq INTO v_seq;
  UPDATE events SET superseded_by = v_seq
    WHERE task_id = p_task AND seq >= p_from AND seq < v_seq AND superseded_by IS NULL;
  UPDATE tasks SET status = p_status, updated_at = p_at WHERE id = p_task;
  RETURN v_seq;
END $$;
`,
  },
  {
    version: 2,
    name: 'a notification on each append',
    sql: `
-- the channel readers LISTEN to (per schema: channels are per database); a long schema name is
-- hashed, as a channel's name has at most 63 bytes
CREATE FUNCTION troupe_events_channel(p_schema text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT 'troupe_events:' || CASE WHEN octet_length(p_schema) <= 49 THEN p_schema ELSE md5(p_schema) END
$$;

-- in the appending transaction, so it is delivered when (and only if) the events commit; the
-- payload is the highest new seq
CREATE FUNCTION troupe_events_appended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify(troupe_events_channel(TG_TABLE_SCHEMA), (SELECT max(seq) FROM appended)::text);
  RETURN NULL;
END $$;

CREATE TRIGGER events_appended AFTER INSERT ON events REFERENCING NEW TABLE AS appended
  FOR EACH STATEMENT EXECUTE FUNCTION troupe_events_appended();
`,
  },
  {
    version: 3,
    name: 'writes in fewer steps: the summary on the row, leases ordered by the write lock',
    sql: `
-- what each append did besides its inserts, measured (bench/postgres.js): reading the summary from
-- the events at every call, a row lock on the lease (FOR SHARE), a foreign-key check per event and
-- a trigger with a transition table. Now: the writing transaction keeps the current agent and the
-- last change on the task's row, so a summary or a list page is read from tasks alone

ALTER TABLE tasks ADD COLUMN current_agent text;
UPDATE tasks t SET
  current_agent = (SELECT e.data::jsonb ->> 'agent' FROM events e
    WHERE e.task_id = t.id AND e.type = 'stage_started' AND e.superseded_by IS NULL
    ORDER BY e.seq DESC LIMIT 1),
  updated_at = coalesce((SELECT e.at FROM events e WHERE e.task_id = t.id ORDER BY e.seq DESC LIMIT 1), t.updated_at);

-- a lease is taken under the write lock (${SEQ_LOCK}), so a takeover waits for a write in flight to
-- commit (the new holder then reads it), and a write after it sees the new epoch and is refused: the
-- fence needs no row lock. Taken if free, expired or the holder's own (p_epoch null), or if still at
-- p_epoch (a dead holder's, read before); the new epoch, or null
CREATE FUNCTION troupe_take_lease(p_task text, p_pid integer, p_host text, p_worker text, p_epoch bigint, p_ms float8)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE v_epoch bigint;
BEGIN
  PERFORM ${SEQ_LOCK};
  INSERT INTO leases AS l (task_id, pid, host, worker, epoch, expires_at)
    VALUES (p_task, p_pid, p_host, p_worker, 1, now() + make_interval(secs => p_ms / 1000))
    ON CONFLICT (task_id) DO UPDATE SET pid = excluded.pid, host = excluded.host,
      worker = excluded.worker, epoch = l.epoch + 1, expires_at = excluded.expires_at
    WHERE (p_epoch IS NULL AND (l.pid IS NULL OR l.expires_at <= now()
        OR (l.pid = p_pid AND l.host = p_host AND l.worker IS NOT DISTINCT FROM p_worker)))
      OR l.epoch = p_epoch
    RETURNING epoch INTO v_epoch;
  RETURN v_epoch;
END $$;

-- events are written by these functions only, which check their task under the write lock
ALTER TABLE events DROP CONSTRAINT events_task_id_fkey;
-- the notification is sent by the writes themselves, with the highest seq they wrote
DROP TRIGGER events_appended ON events;
DROP FUNCTION troupe_events_appended();

CREATE OR REPLACE FUNCTION troupe_create_task(p_id text, p_pipeline text, p_input text, p_type text, p_data text, p_at text)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE v_seq bigint;
BEGIN
  INSERT INTO tasks (id, status, pipeline, input, created_at, updated_at)
    VALUES (p_id, 'pending', p_pipeline, p_input, p_at, p_at) ON CONFLICT (id) DO NOTHING;
  IF NOT FOUND THEN RETURN NULL; END IF;
  PERFORM ${SEQ_LOCK};
  INSERT INTO events (task_id, type, at, data) VALUES (p_id, p_type, p_at, p_data) RETURNING seq INTO v_seq;
  ${NOTIFY('v_seq')}
  RETURN v_seq;
END $$;

CREATE OR REPLACE FUNCTION troupe_append(p_task text, p_types text[], p_data text[], p_at text, p_status text, p_epoch bigint)
RETURNS SETOF bigint LANGUAGE plpgsql AS $$
DECLARE v_status text; v_agent text; v_seqs bigint[];
BEGIN
  PERFORM ${SEQ_LOCK};
  SELECT status INTO v_status FROM tasks WHERE id = p_task;
  IF NOT FOUND THEN RAISE EXCEPTION 'no task %', p_task USING ERRCODE = 'TR404'; END IF;
  ${LEASE_CHECK}
  IF v_status IN ('completed', 'failed', 'cancelled') THEN
    ${ENDED}
  END IF;
  ${INSERT_EVENTS}
  IF 'stage_started' = ANY(p_types) THEN
    SELECT u.data::jsonb ->> 'agent' INTO v_agent FROM unnest(p_types, p_data) WITH ORDINALITY AS u(type, data, n)
      WHERE u.type = 'stage_started' ORDER BY u.n DESC LIMIT 1;
  END IF;
  UPDATE tasks SET status = p_status, updated_at = p_at, current_agent = coalesce(v_agent, current_agent)
    WHERE id = p_task;
  ${NOTIFY('v_seqs[array_upper(v_seqs, 1)]')}
  RETURN QUERY SELECT unnest(v_seqs);
END $$;

CREATE OR REPLACE FUNCTION troupe_restart(p_task text, p_from bigint, p_type text, p_data text, p_at text, p_status text, p_epoch bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE v_seq bigint;
BEGIN
  PERFORM ${SEQ_LOCK};
  PERFORM 1 FROM tasks WHERE id = p_task;
  IF NOT FOUND THEN RAISE EXCEPTION 'no task %', p_task USING ERRCODE = 'TR404'; END IF;
  ${LEASE_CHECK}
  INSERT INTO events (task_id, type, at, data) VALUES (p_task, p_type, p_at, p_data) RETURNING seq INTO v_seq;
  UPDATE events SET superseded_by = v_seq
    WHERE task_id = p_task AND seq >= p_from AND seq < v_seq AND superseded_by IS NULL;
  UPDATE tasks SET status = p_status, updated_at = p_at,
    current_agent = (SELECT e.data::jsonb ->> 'agent' FROM events e
      WHERE e.task_id = p_task AND e.type = 'stage_started' AND e.superseded_by IS NULL
      ORDER BY e.seq DESC LIMIT 1)
    WHERE id = p_task;
  ${NOTIFY('v_seq')}
  RETURN v_seq;
END $$;
`,
  },
  {
    version: 4,
    name: 'the task list planned once, however many tasks',
    sql: `
-- the list's page as a prepared statement (LIMIT $1 OFFSET $2) was planned again at every call once
-- the store held a few thousand tasks: its generic plan is costed for a tenth of the table (the
-- planner's guess for a LIMIT it does not know), so the planner kept making custom plans, each
-- costing more than the query (bench/postgres-scale.js: 1.2x at 100,000 tasks). Here the page's
-- plan is generic, made once per session: the walk down tasks_by_created, which is the best
-- plan for a page of any size
CREATE FUNCTION troupe_task_page(p_limit bigint, p_offset bigint) RETURNS SETOF tasks
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN QUERY SELECT * FROM tasks ORDER BY created_at DESC, ord DESC LIMIT p_limit OFFSET p_offset;
END $$;
`,
  },
  {
    version: 5,
    name: 'an append checks and updates its task in one step, refuses a writer whose last events were lost, and gives back the lease at the end',
    sql: `
-- the append in fewer steps: the task's row is updated under the checks (not ended, lease held) and
-- looked at again only to say why it was refused; the caller, which has the events as objects,
-- names the current agent, rather than the function parsing their JSON again; and the append that
-- ends the task gives back its lease in the same commit (nothing can be recorded for an ended task,
-- so the lease guards nothing from there), one commit fewer per task than the holder's release
-- (bench/postgres.js times one append against migration 3's). A lease holder also says the last seq
-- it wrote for the task (p_after): a database that no longer has it lost commits it had answered
-- (a crash with synchronous_commit off, a failover to a standby that was behind), and the writer,
-- whose work went on from them, is refused as if its lease were lost: the task goes on from what
-- the database kept. The six-argument form stays for the workers of an earlier troupe until they
-- are upgraded
CREATE FUNCTION troupe_append(p_task text, p_types text[], p_data text[], p_at text, p_status text, p_epoch bigint,
  p_agent text, p_after bigint)
RETURNS SETOF bigint LANGUAGE plpgsql AS $$
DECLARE v_status text; v_seqs bigint[];
BEGIN
  PERFORM ${SEQ_LOCK};
  UPDATE tasks SET status = p_status, updated_at = p_at, current_agent = coalesce(p_agent, current_agent)
    WHERE id = p_task AND status NOT IN ('completed', 'failed', 'cancelled')
      AND (p_epoch IS NULL OR EXISTS (
        SELECT 1 FROM leases WHERE task_id = p_task AND epoch = p_epoch AND expires_at > now()));
  IF NOT FOUND THEN
    SELECT status INTO v_status FROM tasks WHERE id = p_task;
    IF NOT FOUND THEN RAISE EXCEPTION 'no task %', p_task USING ERRCODE = 'TR404'; END IF;
    ${LEASE_CHECK}
    ${ENDED}
  END IF;
  IF p_after IS NOT NULL AND NOT EXISTS (SELECT 1 FROM events WHERE task_id = p_task AND seq >= p_after) THEN
    RAISE EXCEPTION 'the database no longer has event % of task %, which this worker wrote (its last commits were lost): nothing more is recorded from here', p_after, p_task
      USING ERRCODE = 'TR423';
  END IF;
  ${INSERT_EVENTS}
  IF p_epoch IS NOT NULL AND p_status IN ('completed', 'failed', 'cancelled') THEN
    UPDATE leases SET pid = NULL, host = NULL, worker = NULL WHERE task_id = p_task AND epoch = p_epoch;
  END IF;
  ${NOTIFY('v_seqs[array_upper(v_seqs, 1)]')}
  RETURN QUERY SELECT unnest(v_seqs);
END $$;
`,
  },
  {
    version: 6,
    name: "the lease holder's boot and PID namespace, and the troupe version of each event",
    sql: `
-- a pid names one process only within one boot and one PID namespace (containers sharing a
-- hostname have their own): a holder is judged dead before its lease expires only when both are
-- this process's too (core/event-store.ts isHolderAlive)
ALTER TABLE leases ADD COLUMN boot_id text, ADD COLUMN pid_ns text;

-- the troupe that appended each event, from its session's troupe.engine (connectPostgres sets it):
-- no argument more for the writing functions. Events from before have none (the default is set
-- after the column is added, so they are not given this session's version)
ALTER TABLE events ADD COLUMN engine text;
ALTER TABLE events ALTER COLUMN engine SET DEFAULT current_setting('troupe.engine', true);

-- troupe_take_lease with the holder's scope: the holder's own lease is the same pid, host,
-- worker, boot and namespace (another container's pid 1 is not this one's). The six-argument form
-- stays for the workers of an earlier troupe until they are upgraded
CREATE FUNCTION troupe_take_lease(p_task text, p_pid integer, p_host text, p_worker text, p_boot text,
  p_ns text, p_epoch bigint, p_ms float8)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE v_epoch bigint;
BEGIN
  PERFORM ${SEQ_LOCK};
  INSERT INTO leases AS l (task_id, pid, host, worker, boot_id, pid_ns, epoch, expires_at)
    VALUES (p_task, p_pid, p_host, p_worker, p_boot, p_ns, 1, now() + make_interval(secs => p_ms / 1000))
    ON CONFLICT (task_id) DO UPDATE SET pid = excluded.pid, host = excluded.host, worker = excluded.worker,
      boot_id = excluded.boot_id, pid_ns = excluded.pid_ns, epoch = l.epoch + 1, expires_at = excluded.expires_at
    WHERE (p_epoch IS NULL AND (l.pid IS NULL OR l.expires_at <= now()
        OR (l.pid = p_pid AND l.host = p_host AND l.worker IS NOT DISTINCT FROM p_worker
          AND l.boot_id IS NOT DISTINCT FROM p_boot AND l.pid_ns IS NOT DISTINCT FROM p_ns)))
      OR l.epoch = p_epoch
    RETURNING epoch INTO v_epoch;
  RETURN v_epoch;
END $$;
`,
  },
  {
    version: 7,
    name: 'tracker issues held by troupe watch',
    sql: `
-- one row an issue (core/event-store.ts IssueClaim): the primary key makes a claim exactly once
-- across every watcher on the store (INSERT … ON CONFLICT)
CREATE TABLE issue_claims (
  source text NOT NULL,
  issue_id text NOT NULL,
  task_id text,
  attempts integer NOT NULL DEFAULT 0,
  retry_at text,
  comment_id text,
  claimed_at text NOT NULL,
  PRIMARY KEY (source, issue_id)
);
`,
  },
  {
    version: 8,
    name: 'the pull request a watched issue ended at',
    sql: `
-- core/event-store.ts IssueClaim.pullRequest: opened and linked once, by one watcher
ALTER TABLE issue_claims ADD COLUMN pull_request text;
`,
  },
];

/** The last version this troupe knows: a schema with a later one was migrated by a newer troupe. */
export const LATEST_VERSION = Math.max(...MIGRATIONS.map((step) => step.version));

export interface MigrationState {
  version: number;
  name: string;
  appliedAt: string | null;
}

const BOOKKEEPING = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;

/**
 * Applies the steps not applied yet, in one transaction, under an advisory lock on the schema's
 * name: of two processes starting together, the second waits and then finds nothing to do.
 * Returns the versions it applied.
 */
export function migrate(db: SyncPg, schema: string | null, where: string): number[] {
  return db.transaction(() => {
    db.query(`SELECT pg_advisory_xact_lock(7450, hashtext(coalesce($1, current_schema())))`, [schema]);
    if (schema) db.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    db.query(BOOKKEEPING);
    const done = new Set(appliedVersions(db));
    // thrown in the transaction: the schema and bookkeeping created above are rolled back too
    refuseNewerSchema(Math.max(0, ...done), LATEST_VERSION, where);
    const applied: number[] = [];
    for (const step of MIGRATIONS) {
      if (done.has(step.version)) continue;
      db.query(step.sql);
      db.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [step.version, step.name]);
      applied.push(step.version);
    }
    return applied;
  });
}

/** The highest version recorded in the schema (0: none, or no troupe tables); read-only. */
export function recordedVersion(db: SyncPg): number {
  if (!hasBookkeeping(db)) return 0;
  return Math.max(0, ...appliedVersions(db));
}

/** Every known step, with when it was applied (null: not yet); read-only. */
export function migrationStatus(db: SyncPg): MigrationState[] {
  const rows = hasBookkeeping(db)
    ? db.query<{ version: number; applied_at: string }>(
        `SELECT version, to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS applied_at
         FROM schema_migrations`,
      )
    : [];
  const at = new Map(rows.map((row) => [row.version, row.applied_at]));
  return MIGRATIONS.map((step) => ({
    version: step.version,
    name: step.name,
    appliedAt: at.get(step.version) ?? null,
  }));
}

function hasBookkeeping(db: SyncPg): boolean {
  return (
    db.query<{ found: boolean }>(`SELECT to_regclass('schema_migrations') IS NOT NULL AS found`)[0]?.found ===
    true
  );
}

function appliedVersions(db: SyncPg): number[] {
  return db.query<{ version: number }>('SELECT version FROM schema_migrations').map((row) => row.version);
}
