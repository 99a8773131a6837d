import { createRequire } from 'node:module';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type * as Pg from 'pg';
import type { NativePg } from './native-pg.js';
import { PgQueryError } from './pg-query-error.js';
import {
  CLOSED_FIRST,
  type PgNotice,
  type PgReply,
  type PgRequest,
  type PgWorkerData,
  pgWorkerMain,
  STARTING,
} from './pg-worker.js';
import type { PgClient } from './postgres-store.js';

export interface SyncPgOptions {
  connection: Pg.ClientConfig;
  leaseMs: number;
  renewMs: number;
  /** A NOTIFY channel whose notifications `notified()` counts. */
  channel?: string;
  /** How long a caller waits for any answer before giving up (beyond the statement timeout). */
  answerTimeoutMs: number;
  /** Queries and transactions go through libpq on this thread (native-pg.ts) rather than the worker. */
  native?: NativePg | null;
}

type Request = PgRequest extends infer R ? (R extends PgRequest ? Omit<R, 'id'> : never) : never;
type Told = Extract<Request, { op: 'hold' | 'drop' }>;

/** How long a call looks for its answer before it sleeps: a loopback query's round trip. */
const SPIN_MS = 0.2;

/**
 * PostgreSQL, synchronously: queries go through libpq on this thread when `native` is given
 * (native-pg.ts), else `pg` runs them in a worker thread and the caller blocks (Atomics.wait on a
 * shared word) until the worker answers. The worker thread renews leases and listens either way.
 * The EventStore interface is synchronous, and SQLite users pay nothing for the PostgreSQL store
 * this way (docs/architecture.md, "The PostgreSQL store"). The cost: this thread does nothing else
 * during a round trip; every statement has a timeout, and so does the wait, so a cut-off network
 * cannot hang it forever.
 */

export class SyncPg {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly state = new Int32Array(new SharedArrayBuffer(16));
  private readonly listeners = new Set<(notice: PgNotice) => void>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: SyncPgOptions) {
    const requests = new MessageChannel();
    const notices = new MessageChannel();
    const data: PgWorkerData = {
      port: requests.port2,
      notices: notices.port2,
      state: this.state,
      connection: options.connection,
      channel: options.channel ?? null,
      leaseMs: options.leaseMs,
      renewMs: options.renewMs,
    };
    // pg is loaded by the worker only: `troupe --version` and SQLite users never load it
    const pg = createRequire(import.meta.url).resolve('pg');
    this.worker = new Worker(workerSource(pg), {
      eval: true,
      // not this process's flags: `--input-type=module` would make the script a module without `require`
      execArgv: [],
      workerData: data,
      transferList: [requests.port2, notices.port2],
    });
    // neither the worker nor its notices keep the process alive; close() ends them
    this.worker.unref();
    this.port = requests.port1;
    notices.port1.on('message', (notice: PgNotice) => {
      for (const listener of this.listeners) listener(notice);
    });
    notices.port1.unref();
  }

  /** Which client sends the queries: libpq on this thread, or pg in the worker thread. */
  get client(): PgClient {
    return this.options.native ? 'native' : 'bridge';
  }

  query<Row = Record<string, unknown>>(sql: string, params: unknown[] = []): Row[] {
    const native = this.openNative();
    if (native) return native.query<Row>(sql, params);
    return this.call({ op: 'query', sql, params }) as Row[];
  }

  /** Runs `body` in one transaction on one connection: committed if it returns, rolled back if it throws. */
  transaction<T>(body: () => T): T {
    this.step('begin');
    let result: T;
    try {
      result = body();
    } catch (error) {
      this.step('rollback');
      throw error;
    }
    this.step('commit');
    return result;
  }

  /** Keeps renewing a lease from the worker thread until `drop` (or until it is lost). */
  hold(taskId: string, epoch: number): void {
    this.tell({ op: 'hold', taskId, epoch });
  }

  drop(taskId: string): void {
    this.tell({ op: 'drop', taskId });
  }

  /** LISTENs to `channel` from now on: each notification on it comes to `onNotice` as 'appended'. */
  watch(channel: string): void {
    this.call({ op: 'watch', channel });
  }

  /**
   * How many notifications came on the channel so far, read without a round trip; null while the
   * worker is not listening (then nothing can be known without asking the database).
   */
  notified(): number | null {
    return Atomics.load(this.state, 2) === 1 ? Atomics.load(this.state, 1) : null;
  }

  onNotice(listener: (notice: PgNotice) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    if (this.closed) return;
    this.options.native?.close();
    try {
      // a worker still loading pg (the store was open for a moment: `troupe db status`) has opened
      // nothing to end: it is stopped rather than waited for, which would cost most of a tenth of a second
      if (Atomics.compareExchange(this.state, 3, STARTING, CLOSED_FIRST) !== STARTING)
        this.call({ op: 'close' });
    } finally {
      this.closed = true;
      void this.worker.terminate();
    }
  }

  private step(op: 'begin' | 'commit' | 'rollback') {
    const native = this.openNative();
    if (native) native[op]();
    else this.call({ op });
  }

  private openNative(): NativePg | null {
    if (this.closed) throw closedError();
    return this.options.native ?? null;
  }

  /** Told, not asked: the worker thread takes requests in order, so nothing need wait for it. */
  private tell(request: Told) {
    if (this.closed) throw closedError();
    this.port.postMessage(request);
  }

  private call(request: Request): Record<string, unknown>[] {
    if (this.closed) throw closedError();
    const id = this.nextId++;
    Atomics.store(this.state, 0, 0);
    this.port.postMessage({ ...request, id });
    const deadline = Date.now() + this.options.answerTimeoutMs;
    for (;;) {
      const received = receiveMessageOnPort(this.port) as { message: PgReply } | undefined;
      if (received) {
        // an answer to a request given up on earlier is passed over
        if (received.message.id !== id) continue;
        if ('error' in received.message) throw new PgQueryError(received.message.error);
        return received.message.rows;
      }
      const left = deadline - Date.now();
      if (left <= 0)
        throw new PgQueryError({
          message: `no answer from PostgreSQL in ${Math.round(this.options.answerTimeoutMs / 1000)} s`,
          code: 'ETIMEDOUT',
        });
      // most answers come within a fraction of a millisecond: looking for one a while before
      // sleeping saves the futex's sleep and wake-up, which cost more than the query on loopback
      const spinUntil = performance.now() + SPIN_MS;
      while (Atomics.load(this.state, 0) === 0 && performance.now() < spinUntil);
      Atomics.wait(this.state, 0, 0, left);
      Atomics.store(this.state, 0, 0);
    }
  }
}

const closedError = () => new PgQueryError({ message: 'the PostgreSQL store is closed' });

/**
 * The worker's script: pgWorkerMain from its source, given pg and the worker's data. Should it fail
 * to start (pg missing), every request is answered with why, rather than left to time out.
 */
function workerSource(pg: string): string {
  return `const { workerData } = require('node:worker_threads');
try {
  (${pgWorkerMain.toString()})(require(${JSON.stringify(pg)}), workerData);
} catch (error) {
  workerData.port.on('message', (request) => {
    workerData.port.postMessage({ id: request.id, error: { message: 'the PostgreSQL client did not start: ' + error.message } });
    Atomics.store(workerData.state, 0, 1);
    Atomics.notify(workerData.state, 0);
  });
}`;
}
