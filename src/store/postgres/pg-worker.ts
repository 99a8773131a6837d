import type { MessagePort } from 'node:worker_threads';
import type * as Pg from 'pg';
import type { PgFailure } from './pg-query-error.js';

/** What the worker thread is started with (see sync-client.ts). */
export interface PgWorkerData {
  /** Requests in, answers out; each answer is signalled on `state` for the waiting caller. */
  port: MessagePort;
  /** Lost leases and appended events, told as they happen (the caller listens to this one asynchronously). */
  notices: MessagePort;
  /**
   * [0] an answer is ready; [1] how many notifications came on `channel`; [2] 1 while listening
   * (the count can be trusted), 0 while that connection is down; [3] STARTING until the worker
   * runs (1) or the store closes before it does (CLOSED_FIRST: then it never connects)
   */
  state: Int32Array;
  connection: Pg.ClientConfig;
  /** LISTENed to on a connection of its own, counted in state[1]. */
  channel: string | null;
  leaseMs: number;
  renewMs: number;
}

export type PgRequest =
  | { id: number; op: 'query'; sql: string; params: unknown[] }
  | { id: number; op: 'begin' | 'commit' | 'rollback' | 'close' }
  /** Renew this lease (at this epoch) until dropped or lost. */
  | { op: 'hold'; taskId: string; epoch: number }
  | { op: 'drop'; taskId: string }
  /** LISTEN to this channel too, and tell each of its notifications on `notices` (as 'appended'). */
  | { id: number; op: 'watch'; channel: string };

/** The requests the worker answers (the others are told: hold and drop). */
type AskedRequest = Exclude<PgRequest, { op: 'hold' | 'drop' }>;

/** state[3], the worker's life, which decides whether the store's close must wait for it (1: running). */
export const STARTING = 0;
export const CLOSED_FIRST = 2;

export type PgReply = { id: number; rows: Record<string, unknown>[] } | { id: number; error: PgFailure };

export type PgNotice =
  | { type: 'lease_lost'; taskId: string }
  /** Events were appended up to `seq`; null: perhaps some were, unseen (the listener was down). */
  | { type: 'appended'; seq: number | null };

/**
 * The body of the worker thread that talks to PostgreSQL: it answers one request at a time on
 * `port` and renews the leases it was told to hold, on a connection of its own, so a caller that
 * is busy or blocked does not let them expire.
 *
 * It runs from its source text (`new Worker(source, {eval: true})`, so the same code runs from
 * the TypeScript sources, dist/ and the bundle): it may use only its parameters and globals.
 */
export function pgWorkerMain(pg: typeof Pg, data: PgWorkerData): void {
  const { port, notices, state } = data;
  // STARTING → running, unless the store closed first (the values are repeated: see above)
  if (Atomics.compareExchange(state, 3, 0, 1) !== 0) return;
  pg.types.setTypeParser(20, Number); // bigint: seqs and epochs stay far below 2^53
  let main: Pg.Client | null = null;
  let renewer: Pg.Client | null = null;
  let listener: Pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  /** The channel `watch` asked for, LISTENed to beside `data.channel`. */
  let watched: string | null = null;
  /** The connection a transaction was begun on: if it is lost, the transaction is too. */
  let inTransaction: Pg.Client | null = null;
  const held = new Map<string, { epoch: number; renewedAt: number }>();
  let renewing = false;

  const connect = async (): Promise<Pg.Client> => {
    const client = new pg.Client(data.connection);
    client.on('error', () => forget(client));
    try {
      await client.connect();
    } catch (error) {
      forget(client);
      throw error;
    }
    return client;
  };
  const forget = (client: Pg.Client) => {
    if (main === client) main = null;
    if (renewer === client) renewer = null;
    if (listener === client) {
      listener = null;
      Atomics.store(state, 2, 0);
    }
    client.end().catch(() => {});
  };
  const appended = (seq: number | null) => notices.postMessage({ type: 'appended', seq } satisfies PgNotice);
  const listen = async () => {
    const channels = [data.channel, watched].filter((channel) => channel !== null);
    if (channels.length === 0 || listener) return;
    try {
      const client = await connect();
      client.on('notification', (notification) => {
        if (notification.channel === watched) appended(Number(notification.payload) || null);
        else Atomics.add(state, 1, 1);
      });
      for (const channel of channels) await client.query(`LISTEN "${channel}"`);
      listener = client;
      // what was notified while not listening is unknown: count one, so it is all read again
      Atomics.add(state, 1, 1);
      Atomics.store(state, 2, 1);
      if (watched) appended(null);
    } catch {
      // tried again at the next renewal tick; meanwhile every read goes to the database
    }
  };
  // one connection attempt at a time: the timer's and a watch's would otherwise both connect
  const listenOnce = () => {
    connecting ??= listen().finally(() => {
      connecting = null;
    });
    return connecting;
  };
  // a broken or timed-out connection is dropped, and the next request connects again (the server
  // restarted, the network came back); an SQL error leaves the connection as it is
  const lostConnection = (error: { code?: string }) =>
    !error.code || /^(08|57P|53)/.test(error.code) || /^E[A-Z]+$/.test(error.code);

  // a statement with parameters is prepared once per connection under a name of its own: parsed
  // and planned once rather than at every call (half the time of the summary's round trip); one
  // without parameters may hold several statements (a migration), which only the simple protocol takes
  const names = new Map<string, string>();
  const statement = (sql: string, values: unknown[]): string | Pg.QueryConfig => {
    if (values.length === 0) return sql;
    const name = names.get(sql) ?? `troupe_${names.size + 1}`;
    names.set(sql, name);
    return { name, text: sql, values };
  };

  const answer = (reply: PgReply) => {
    port.postMessage(reply);
    Atomics.store(state, 0, 1);
    Atomics.notify(state, 0);
  };

  const perform = async (request: AskedRequest): Promise<Record<string, unknown>[]> => {
    switch (request.op) {
      case 'query': {
        if (inTransaction && inTransaction !== main)
          throw Object.assign(new Error('the connection was lost in the middle of a transaction'), {
            code: '08006',
          });
        main ??= await connect();
        try {
          return (await main.query(statement(request.sql, request.params))).rows;
        } catch (error) {
          // the connection broke while idle (the server restarted) and pg refused before sending
          // anything: safe to send again, once, on a new connection
          if (inTransaction || !/is not queryable/.test((error as Error).message)) throw error;
          forget(main);
          main = await connect();
          return (await main.query(statement(request.sql, request.params))).rows;
        }
      }
      case 'begin':
        main ??= await connect();
        await main.query('BEGIN');
        inTransaction = main;
        return [];
      case 'commit':
      case 'rollback': {
        const client = inTransaction;
        inTransaction = null;
        if (client && client === main) await client.query(request.op === 'commit' ? 'COMMIT' : 'ROLLBACK');
        else if (request.op === 'commit')
          throw Object.assign(new Error('the connection was lost before the transaction committed'), {
            code: '08006',
          });
        return [];
      }
      case 'watch':
        await connecting;
        watched = request.channel;
        if (!listener) await listenOnce();
        else
          await listener.query(`LISTEN "${watched}"`).catch(() => {
            // connected again (and listening to both) at the next renewal tick
            if (listener) forget(listener);
          });
        return [];
      case 'close':
        clearInterval(timer);
        held.clear();
        Atomics.store(state, 2, 0);
        await Promise.all([main, renewer, listener].map((client) => client?.end().catch(() => {})));
        main = renewer = listener = null;
        return [];
    }
  };

  const answerTo = (request: AskedRequest) => {
    perform(request).then(
      (rows) => {
        answer({ id: request.id, rows });
        if (request.op === 'close') port.close();
      },
      (error: Error & { code?: string }) => {
        if (lostConnection(error) && main) forget(main);
        answer({
          id: request.id,
          error: { message: error.message, ...(error.code ? { code: error.code } : {}) },
        });
      },
    );
  };
  port.on('message', (request: PgRequest) => {
    // told, not answered (sync-client.ts does not wait for them)
    if (request.op === 'hold') held.set(request.taskId, { epoch: request.epoch, renewedAt: Date.now() });
    else if (request.op === 'drop') held.delete(request.taskId);
    else answerTo(request);
  });

  const lose = (taskId: string) => {
    held.delete(taskId);
    notices.postMessage({ type: 'lease_lost', taskId } satisfies PgNotice);
  };

  // a lease is renewed only while its epoch is the one this store took and it has not expired:
  // once lost it stays lost, as the database's fencing says
  const renew = async () => {
    if (held.size === 0 || renewing) return;
    renewing = true;
    const sent = [...held].map(([taskId, lease]) => ({ taskId, epoch: lease.epoch }));
    try {
      renewer ??= await connect();
      const { rows } = await renewer.query(
        `UPDATE leases l SET expires_at = now() + make_interval(secs => $3::float8 / 1000)
         FROM unnest($1::text[], $2::bigint[]) AS h(task_id, epoch)
         WHERE l.task_id = h.task_id AND l.epoch = h.epoch AND l.expires_at > now()
         RETURNING l.task_id`,
        [sent.map((s) => s.taskId), sent.map((s) => s.epoch), data.leaseMs],
      );
      const renewed = new Set(rows.map((row) => row.task_id as string));
      const now = Date.now();
      for (const { taskId, epoch } of sent) {
        const lease = held.get(taskId);
        if (lease?.epoch !== epoch) continue; // dropped or taken again meanwhile
        if (renewed.has(taskId)) lease.renewedAt = now;
        else lose(taskId);
      }
    } catch {
      if (renewer) forget(renewer);
      // cut off from the database: past its expiry another process may have taken the lease
      const now = Date.now();
      for (const [taskId, lease] of held) if (now - lease.renewedAt >= data.leaseMs) lose(taskId);
    } finally {
      renewing = false;
    }
  };
  void listenOnce();
  const timer = setInterval(() => {
    void listenOnce();
    void renew();
  }, data.renewMs);
}
