import { createHash } from 'node:crypto';
import {
  LeaseLostError,
  NotFoundError,
  StateError,
  StoreConfigError,
  StoreUnavailableError,
} from '../../core/errors.js';
import {
  type EventStore,
  isHolderAlive,
  type LeaseHolder,
  newTaskId,
  type ProviderWindow,
  type TaskFilter,
} from '../../core/event-store.js';
import { type EventOf, isTerminal, type StoredEvent, type TaskEvent } from '../../core/events.js';
import { type ClaimRow, issueClaimsOn, numberedParameters } from '../issue-claims-sql.js';
import { type EventRow, type TaskRow, toStored, toSummary } from '../rows.js';
import { engineVersion, refuseNewerSchema } from '../schema-version.js';
import { redactStoreUrl } from '../store-url.js';
import { LATEST_VERSION, migrate, recordedVersion } from './migrations.js';
import { libpqConninfo, loadLibpq, NativePg } from './native-pg.js';
import { PgQueryError } from './pg-query-error.js';
import { SyncPg } from './sync-client.js';

export interface PostgresStoreOptions {
  /** A schema of its own (created when missing); default: the connection's search_path. */
  schema?: string | null;
  /** A lease not renewed for this long is lost (default 30 s); the store renews every `renewMs` (10 s). */
  leaseMs?: number;
  renewMs?: number;
  /** Each statement's limit (default 30 s): no call waits longer than this for the database. */
  statementTimeoutMs?: number;
  /** Settings for this store's sessions (`{synchronous_commit: 'off'}`, as bench/postgres.js measures). */
  settings?: Record<string, string>;
  /**
   * What sends the queries: libpq on this thread ('native', when the optional libpq package is
   * installed), or node-postgres in a worker thread ('bridge'). Default: TROUPE_PG_CLIENT, else
   * native when it can be.
   */
  client?: PgClient;
  /**
   * Open only a store that is already there (troupe's MCP server, a reader in another process):
   * no schema is created and no migration runs; a database or schema without troupe's tables is
   * a NotFoundError.
   */
  existing?: boolean;
}

export type PgClient = 'native' | 'bridge';

/** Events read per round trip when a task's log or a type's events are iterated. */
const PAGE = 500;

interface LeaseRow {
  pid: number | null;
  host: string | null;
  worker: string | null;
  boot_id: string | null;
  pid_ns: string | null;
  epoch: number | null;
  expired: boolean | null;
  task: string | null;
}

// the row holds the current agent and the last change (migration 3): the writes keep them; the
// issue is read from the task's first event (task_created) through events_by_task
const SUMMARY = `SELECT t.id, t.status, t.pipeline, t.input, t.created_at, t.current_agent, t.updated_at,
  (SELECT e.data::jsonb ->> 'issue' FROM events e
   WHERE e.task_id = t.id AND e.type = 'task_created' ORDER BY e.seq LIMIT 1) AS issue`;

/** The connection to PostgreSQL behind a store, for the store and for `troupe db`. */
export function connectPostgres(url: string, options: PostgresStoreOptions = {}): SyncPg {
  const statementTimeoutMs = options.statementTimeoutMs ?? 30_000;
  // pg lets the URL's `options` replace the config's: taken out, and passed on with ours
  const parsed = new URL(url);
  const urlOptions = parsed.searchParams.get('options');
  parsed.searchParams.delete('options');
  const settings = {
    ...(options.schema ? { search_path: options.schema } : {}),
    // the events this session appends record it (migration 6's default for events.engine)
    'troupe.engine': engineVersion(),
    ...options.settings,
  };
  const sessionOptions = (extra: Record<string, string>) =>
    [
      urlOptions ?? '',
      ...Object.entries({ ...extra, ...settings }).map(([name, value]) => `-c ${name}=${value}`),
    ]
      .join(' ')
      .trim();
  // which schema a connection serves, for an operator reading pg_stat_activity
  const applicationName = options.schema ? `troupe:${options.schema}` : 'troupe';
  const leaseMs = options.leaseMs ?? 30_000;
  const native = nativeClient(parsed.toString(), options.client, {
    options: sessionOptions({
      statement_timeout: String(statementTimeoutMs),
      // libpq prints the server's notices on stderr ("relation … already exists, skipping")
      client_min_messages: 'error',
    }),
    application_name: applicationName,
    connect_timeout: '10',
    // a peer gone silent is found by TCP: probes after 10 s idle, and unacknowledged data after 15 s
    keepalives: '1',
    keepalives_idle: '10',
    keepalives_interval: '5',
    keepalives_count: '3',
    tcp_user_timeout: '15000',
  });
  return new SyncPg({
    channel: windowsChannel(options.schema ?? null),
    connection: {
      connectionString: parsed.toString(),
      options: sessionOptions({}),
      statement_timeout: statementTimeoutMs,
      query_timeout: statementTimeoutMs + 1000,
      connectionTimeoutMillis: 10_000,
      keepAlive: true,
      application_name: applicationName,
    },
    leaseMs,
    renewMs: options.renewMs ?? Math.max(10, Math.floor(leaseMs / 3)),
    answerTimeoutMs: statementTimeoutMs + 15_000,
    native,
  });
}

/** libpq on this thread, unless the bridge was asked for or libpq cannot serve this URL. */
function nativeClient(
  url: string,
  asked: PgClient | undefined,
  keywords: Record<string, string>,
): NativePg | null {
  const client = asked ?? pgClientFromEnv();
  if (client === 'bridge') return null;
  const Libpq = loadLibpq();
  const conninfo = Libpq && libpqConninfo(url, keywords);
  if (Libpq && conninfo) return new NativePg(Libpq, conninfo);
  if (client === 'native')
    throw new StoreConfigError(
      Libpq
        ? `TROUPE_PG_CLIENT=native: libpq does not take the store URL ${redactStoreUrl(url)} (a parameter only node-postgres knows)`
        : 'TROUPE_PG_CLIENT=native: the libpq package is not installed or not built for this Node',
      {
        hint: Libpq
          ? "use libpq's parameters (sslmode=require rather than ssl=true), or TROUPE_PG_CLIENT=bridge"
          : "install libpq's headers (apt install libpq-dev) and run npm ci again (npm rebuild libpq after a Node upgrade), or unset TROUPE_PG_CLIENT",
      },
    );
  return null;
}

function pgClientFromEnv(): PgClient | undefined {
  const value = process.env.TROUPE_PG_CLIENT;
  if (value === undefined || value === '') return undefined;
  if (value === 'native' || value === 'bridge') return value;
  throw new StoreConfigError(`TROUPE_PG_CLIENT is '${value}': it must be native or bridge`);
}

/**
 * Where closeProvider notifies the other workers (one channel per schema: channels are per
 * database). A channel's name has at most 63 bytes: a long schema name is hashed, as
 * troupe_events_channel does in SQL.
 */
const windowsChannel = (schema: string | null) => {
  const name = schema ?? 'public';
  return `troupe_windows:${name.length <= 48 ? name : createHash('md5').update(name).digest('hex')}`;
};

/** What a PostgreSQL failure means to troupe: the task's own errors by their codes, the rest out of reach. */
export function storeError(error: unknown, url: string, taskId?: string): unknown {
  if (!(error instanceof PgQueryError)) return error;
  switch (error.code) {
    case 'TR404':
      return new NotFoundError(error.message);
    case 'TR409':
      return new StateError(error.message);
    case 'TR423':
      return new LeaseLostError(taskId ?? '', error.message);
  }
  // connection, authentication, no such database, server shutting down or out of resources, and
  // statement_timeout (57014): the store is out of reach, not the request wrong
  if (!error.code || /^(08|28|3D|57P|53|57014)/.test(error.code) || /^E[A-Z]+$/.test(error.code))
    return new StoreUnavailableError(`PostgreSQL store ${redactStoreUrl(url)}: ${error.message}`, {
      hint: 'check that the server runs and can be reached, and the URL (host, port, database, user) is right',
      cause: error,
    });
  return error;
}

/**
 * Throws unless troupe's tables are in the schema the connection serves (its search_path), at a
 * version this troupe knows.
 */
export function requireTables(db: SyncPg, url: string, schema: string | null): void {
  const version = recordedVersion(db);
  if (!version) throw new NotFoundError(`no troupe store at ${storePlace(url, schema)}`);
  refuseNewerSchema(version, LATEST_VERSION, storePlace(url, schema));
}

/** The store as an operator names it: its URL without the password, and its schema. */
export const storePlace = (url: string, schema: string | null) =>
  `${redactStoreUrl(url)}${schema ? ` (schema ${schema})` : ''}`;

/** The first key of troupe's named advisory locks ('trup'); the store's own locks take one key. */
const ADVISORY_NAMESPACE = 0x74727570;

/**
 * The event store on PostgreSQL, for many processes on many machines (docs/distributed.md).
 * Synchronous like the others: each call is a round trip through sync-client.ts.
 */
export function openPostgresStore(url: string, options: PostgresStoreOptions = {}): EventStore {
  const db = connectPostgres(url, options);
  const leaseMs = options.leaseMs ?? 30_000;
  const run = <T>(body: () => T, taskId?: string): T => {
    try {
      return body();
    } catch (error) {
      throw storeError(error, url, taskId);
    }
  };
  try {
    if (options.existing) run(() => requireTables(db, url, options.schema ?? null));
    else run(() => migrate(db, options.schema ?? null, storePlace(url, options.schema ?? null)));
  } catch (error) {
    db.close();
    throw error;
  }

  /** The epoch of each lease this store took: its writes for the task carry it (fencing). */
  const epochs = new Map<string, number>();
  /** For each task leased here, the last seq this store wrote under the lease (migration 5 checks it is still there). */
  const lastWritten = new Map<string, number>();
  /** Tasks whose lease this store held until the append that ended them, which gave it back. */
  const releasedAtEnd = new Set<string>();
  /** The lease is no longer this store's to renew or write under (released, or given back at the end). */
  const forgetLease = (taskId: string) => {
    lastWritten.delete(taskId);
    if (epochs.delete(taskId)) run(() => db.drop(taskId));
  };
  const lostListeners = new Set<(taskId: string) => void>();
  const lost = (taskId: string) => {
    for (const listener of lostListeners) listener(taskId);
  };
  const appendedListeners = new Set<(seq: number | null) => void>();
  db.onNotice((notice) => {
    if (notice.type === 'lease_lost') lost(notice.taskId);
    else for (const listener of appendedListeners) listener(notice.seq);
  });
  let watching = false;
  /** Asks the worker thread to LISTEN for the appends' notifications (migration 2's trigger). */
  const watchAppends = () => {
    const [row] = run(() =>
      db.query<{ channel: string }>(
        `SELECT troupe_events_channel(n.nspname) AS channel
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = 'events'::regclass`,
      ),
    );
    run(() => db.watch(row!.channel));
    watching = true;
  };
  const fenced = <T>(taskId: string, body: () => T): T => {
    try {
      return run(body, taskId);
    } catch (error) {
      if (error instanceof LeaseLostError) {
        db.drop(taskId);
        lost(taskId);
      }
      throw error;
    }
  };

  const engine = engineVersion();
  const stored = (event: TaskEvent, seq: number, taskId: string, at: string) =>
    ({ ...event, seq, taskId, at, engine }) as StoredEvent;

  /** Pages of rows through a keyset on seq: never the whole result in memory. */
  function* paged(sql: string, params: unknown[], afterSeq: number): IterableIterator<StoredEvent> {
    let after = afterSeq;
    for (;;) {
      const rows = run(() => db.query<EventRow>(sql, [...params, after, PAGE]));
      for (const row of rows) yield toStored(row);
      if (rows.length < PAGE) return;
      after = rows[rows.length - 1]!.seq;
    }
  }

  // read before every stage (twice): kept while no window was closed since (the worker thread
  // LISTENs for closeProvider's NOTIFY and counts them in shared memory, so knowing costs no round
  // trip); while it cannot listen, kept only for the rest of this turn of the event loop
  let windows: ProviderWindow[] | null = null;
  let windowsSeen: number | null = null;
  const readWindows = () => {
    const notified = db.notified();
    // both null: read in this turn while not listening (the microtask below forgets it at its end)
    if (windows && notified === windowsSeen) return windows;
    const read = run(() =>
      db.query<{ provider: string; reset_at: string }>(
        'SELECT provider, reset_at FROM provider_windows ORDER BY provider',
      ),
    ).map((row) => ({ provider: row.provider, resetAt: row.reset_at }));
    windows = read;
    windowsSeen = notified;
    if (notified === null)
      queueMicrotask(() => {
        if (windows === read) windows = null;
      });
    return read;
  };

  const readLease = (taskId: string): LeaseRow | undefined =>
    run(() =>
      db.query<LeaseRow>(
        `SELECT t.id AS task, l.pid, l.host, l.worker, l.boot_id, l.pid_ns, l.epoch, l.expires_at <= now() AS expired
         FROM tasks t LEFT JOIN leases l ON l.task_id = t.id WHERE t.id = $1`,
        [taskId],
      ),
    )[0];
  const holderOf = (row: LeaseRow): LeaseHolder => ({
    pid: row.pid!,
    host: row.host ?? '',
    ...(row.boot_id ? { bootId: row.boot_id } : {}),
    ...(row.pid_ns ? { pidNamespace: row.pid_ns } : {}),
    ...(row.worker ? { worker: row.worker } : {}),
  });
  /**
   * Takes the lease if it is free, expired or the holder's own (`epoch` null), or if it is still at
   * `epoch`; the new epoch, or undefined when it was not taken.
   */
  const takeLease = (taskId: string, holder: LeaseHolder, epoch: number | null) => {
    try {
      const [row] = db.query<{ epoch: number | null }>(
        'SELECT troupe_take_lease($1, $2, $3, $4, $5, $6, $7, $8) AS epoch',
        [
          taskId,
          holder.pid,
          holder.host,
          holder.worker ?? null,
          holder.bootId ?? null,
          holder.pidNamespace ?? null,
          epoch,
          leaseMs,
        ],
      );
      return row?.epoch ?? undefined;
    } catch (error) {
      // the lease's row refers to its task (foreign_key_violation: there is none)
      if (error instanceof PgQueryError && error.code === '23503')
        throw new NotFoundError(`no task ${taskId}`);
      throw storeError(error, url, taskId);
    }
  };

  return {
    createTask(event) {
      const at = new Date().toISOString();
      for (;;) {
        const id = newTaskId();
        const [row] = run(() =>
          db.query<{ seq: number | null }>('SELECT troupe_create_task($1, $2, $3, $4, $5, $6) AS seq', [
            id,
            event.pipeline,
            event.input,
            event.type,
            JSON.stringify(event),
            at,
          ]),
        );
        // null: the id was taken, try another
        if (row?.seq != null) return stored(event, row.seq, id, at);
      }
    },
    append(taskId, events, summary, when) {
      const at = when ?? new Date().toISOString();
      const epoch = epochs.get(taskId) ?? null;
      const started = events.findLast((e): e is EventOf<'stage_started'> => e.type === 'stage_started');
      const rows = fenced(taskId, () =>
        db.query<{ seq: number }>('SELECT troupe_append($1, $2, $3, $4, $5, $6, $7, $8) AS seq', [
          taskId,
          events.map((e) => e.type),
          events.map((e) => JSON.stringify(e)),
          at,
          summary.status,
          epoch,
          started?.agent ?? null,
          lastWritten.get(taskId) ?? null,
        ]),
      );
      const seqs = rows.map((row) => row.seq).sort((a, b) => a - b);
      if (epoch !== null) {
        // the append that ends the task gave its lease back (migration 5): the holder's release is done
        if (isTerminal(summary.status)) {
          forgetLease(taskId);
          releasedAtEnd.add(taskId);
        } else lastWritten.set(taskId, seqs[seqs.length - 1]!);
      }
      return events.map((event, i) => stored(event, seqs[i]!, taskId, at));
    },
    restart(taskId, fromSeq, event, summary) {
      const at = new Date().toISOString();
      const [row] = fenced(taskId, () =>
        db.query<{ seq: number }>('SELECT troupe_restart($1, $2, $3, $4, $5, $6, $7) AS seq', [
          taskId,
          fromSeq,
          event.type,
          JSON.stringify(event),
          at,
          summary.status,
          epochs.get(taskId) ?? null,
        ]),
      );
      if (epochs.has(taskId)) lastWritten.set(taskId, row!.seq);
      return stored(event, row!.seq, taskId, at);
    },
    events(taskId, afterSeq = 0) {
      return paged(
        `SELECT seq, task_id, at, data, engine FROM events
         WHERE task_id = $1 AND superseded_by IS NULL AND seq > $2 ORDER BY seq LIMIT $3`,
        [taskId],
        afterSeq,
      );
    },
    eventsOfTypes(types, ofTasksWith) {
      const tasks = ofTasksWith
        ? 'AND task_id IN (SELECT task_id FROM events WHERE type = $2 AND superseded_by IS NULL)'
        : 'AND $2::text IS NULL';
      return paged(
        `SELECT seq, task_id, at, data, engine FROM events
         WHERE type = ANY($1) ${tasks} AND superseded_by IS NULL AND seq > $3 ORDER BY seq LIMIT $4`,
        [[...types], ofTasksWith ?? null],
        0,
      );
    },
    eventsSince(afterSeq, limit) {
      return run(() =>
        db.query<EventRow>(
          'SELECT seq, task_id, at, data, engine FROM events WHERE seq > $1 AND superseded_by IS NULL ORDER BY seq LIMIT $2',
          [afterSeq, limit],
        ),
      ).map(toStored);
    },
    task(id) {
      const [row] = run(() => db.query<TaskRow>(`${SUMMARY} FROM tasks t WHERE t.id = $1`, [id]));
      return row ? toSummary(row) : undefined;
    },
    tasks(filter: TaskFilter = {}) {
      const { sql, params } = taskListSql(filter);
      return run(() => db.query<TaskRow>(sql, params)).map(toSummary);
    },
    tryLease(taskId, holder) {
      // one round trip when the lease is free, expired or already this holder's (the usual case);
      // held by another: taken only if that holder is dead, and nobody took it since it was read
      // (compare-and-set on the epoch)
      let taken = takeLease(taskId, holder, null);
      if (taken === undefined) {
        const row = readLease(taskId);
        if (!row?.pid || isHolderAlive(holderOf(row))) return false;
        taken = takeLease(taskId, holder, row.epoch);
        if (taken === undefined) return false;
      }
      epochs.set(taskId, taken);
      lastWritten.delete(taskId);
      releasedAtEnd.delete(taskId);
      run(() => db.hold(taskId, taken));
      return true;
    },
    releaseLease(taskId, holder) {
      if (releasedAtEnd.delete(taskId)) return;
      try {
        run(() =>
          db.query(
            `UPDATE leases SET pid = NULL, host = NULL, worker = NULL, boot_id = NULL, pid_ns = NULL
             WHERE task_id = $1 AND pid = $2 AND host = $3 AND worker IS NOT DISTINCT FROM $4
               AND boot_id IS NOT DISTINCT FROM $5 AND pid_ns IS NOT DISTINCT FROM $6
               AND ($7::bigint IS NULL OR epoch = $7)`,
            [
              taskId,
              holder.pid,
              holder.host,
              holder.worker ?? null,
              holder.bootId ?? null,
              holder.pidNamespace ?? null,
              epochs.get(taskId) ?? null,
            ],
          ),
        );
      } finally {
        // stop renewing even when the database is away: the lease then expires and another
        // process can take the task (renewed forever, it would stay held by this live process)
        forgetLease(taskId);
      }
    },
    leaseHolder(taskId) {
      const row = readLease(taskId);
      if (!row || row.pid === null || row.expired) return null;
      const holder = holderOf(row);
      return isHolderAlive(holder) ? holder : null;
    },
    lease(taskId) {
      const row = readLease(taskId);
      if (!row || row.pid === null) return null;
      const holder = holderOf(row);
      return { holder, alive: !row.expired && isHolderAlive(holder) };
    },
    closeProvider(provider, resetAt) {
      run(() =>
        db.query(
          `WITH closed AS (
             INSERT INTO provider_windows (provider, reset_at) VALUES ($1, $2)
             ON CONFLICT (provider) DO UPDATE SET reset_at = greatest(provider_windows.reset_at, excluded.reset_at)
             RETURNING 1)
           SELECT pg_notify($3, $1) FROM closed`,
          [provider, resetAt, windowsChannel(options.schema ?? null)],
        ),
      );
      windows = null;
    },
    closedProviders(now) {
      const at = now.toISOString();
      return readWindows().filter((w) => w.resetAt > at);
    },
    ...issueClaimsOn((sql, params) => run(() => db.query<ClaimRow>(numberedParameters(sql), params))),
    onAppended(listener) {
      if (!watching) watchAppends();
      appendedListeners.add(listener);
      return () => appendedListeners.delete(listener);
    },
    holdsLease(taskId) {
      const epoch = epochs.get(taskId);
      if (epoch === undefined) return true;
      return (
        run(() =>
          db.query<{ held: boolean }>(
            'SELECT EXISTS (SELECT 1 FROM leases WHERE task_id = $1 AND epoch = $2 AND expires_at > now()) AS held',
            [taskId, epoch],
          ),
        )[0]?.held === true
      );
    },
    onLeaseLost(listener) {
      lostListeners.add(listener);
      return () => lostListeners.delete(listener);
    },
    // the two-key form, with troupe's own first key: never the same lock as the store's own
    tryAdvisoryLock: (key) =>
      run(
        () =>
          db.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS locked', [
            ADVISORY_NAMESPACE,
            key,
          ])[0]?.locked === true,
      ),
    advisoryUnlock: (key) => {
      run(() => db.query('SELECT pg_advisory_unlock($1, hashtext($2))', [ADVISORY_NAMESPACE, key]));
    },
    close: () => db.close(),
  };
}

/** The list query: the page is chosen first through an index, and only its rows are summarised. */
export function taskListSql(filter: TaskFilter): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.status?.length) {
    params.push(filter.status);
    where.push(`status = ANY($${params.length})`);
  }
  if (filter.pipeline !== undefined) {
    params.push(filter.pipeline);
    where.push(`pipeline = $${params.length}`);
  }
  params.push(filter.limit ?? null, filter.offset ?? 0);
  // unfiltered, the page whose plan is made once (migration 4); filtered, a plan made for the
  // statuses or pipeline asked for (one of them may be rare, and its index then the way)
  const page = where.length
    ? `(SELECT * FROM tasks WHERE ${where.join(' AND ')}
    ORDER BY created_at DESC, ord DESC LIMIT $${params.length - 1} OFFSET $${params.length})`
    : 'troupe_task_page($1, $2)';
  return { sql: `${SUMMARY}, t.ord FROM ${page} t ORDER BY t.created_at DESC, t.ord DESC`, params };
}
