import { createRequire } from 'node:module';
import { PgQueryError } from './pg-query-error.js';

/** The part of node-libpq's PQ (the optional `libpq` package) this client uses. */
interface Libpq {
  connectSync(conninfo: string): void;
  exec(sql: string): void;
  prepare(name: string, sql: string, parameters: number): void;
  execPrepared(name: string, values: (string | null)[]): void;
  resultStatus(): string;
  resultErrorFields(): { sqlState?: string; messagePrimary?: string } | undefined;
  errorMessage(): string;
  ntuples(): number;
  nfields(): number;
  fname(column: number): string;
  ftype(column: number): number;
  getvalue(row: number, column: number): string;
  getisnull(row: number, column: number): boolean;
  consumeInput(): boolean;
  /** 0 idle, 1 active, 2 in a transaction, 3 in a failed one, 4 unknown: the connection is bad */
  transactionStatus(): number;
  finish(): void;
}
export type LibpqClass = new () => Libpq;

const require = createRequire(import.meta.url);

/**
 * node-libpq, when it is installed and built for this Node (it is an optional dependency: without
 * libpq's headers at install time it is skipped, and a build for another Node fails to load).
 */
export function loadLibpq(): LibpqClass | null {
  try {
    return require('libpq') as LibpqClass;
  } catch {
    return null;
  }
}

/** libpq's connection keywords: a URL parameter it does not know (pg's `ssl=true`) fails its connect. */
const LIBPQ_KEYWORDS = new Set([
  'host',
  'hostaddr',
  'port',
  'dbname',
  'user',
  'password',
  'passfile',
  'channel_binding',
  'connect_timeout',
  'client_encoding',
  'options',
  'application_name',
  'fallback_application_name',
  'keepalives',
  'keepalives_idle',
  'keepalives_interval',
  'keepalives_count',
  'tcp_user_timeout',
  'gssencmode',
  'sslmode',
  'requiressl',
  'sslcompression',
  'sslcert',
  'sslkey',
  'sslpassword',
  'sslrootcert',
  'sslcrl',
  'sslcrldir',
  'sslsni',
  'requirepeer',
  'ssl_min_protocol_version',
  'ssl_max_protocol_version',
  'krbsrvname',
  'gsslib',
  'service',
  'target_session_attrs',
]);

/**
 * The store's URL as libpq takes it, with `keywords` set (they replace the URL's own); null when
 * the URL has a parameter only node-postgres understands, which then serves the store.
 */
export function libpqConninfo(url: string, keywords: Record<string, string>): string | null {
  const parsed = new URL(url);
  const parameters = new Map(parsed.searchParams);
  for (const name of parameters.keys()) if (!LIBPQ_KEYWORDS.has(name)) return null;
  for (const [name, value] of Object.entries(keywords)) parameters.set(name, value);
  // percent-encoded by hand: URLSearchParams writes a space as '+', which libpq keeps as a '+'
  const query = [...parameters].map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('&');
  const credentials = parsed.username
    ? `${parsed.username}${parsed.password ? `:${parsed.password}` : ''}@`
    : '';
  return `${parsed.protocol}//${credentials}${parsed.host}${parsed.pathname}${query ? `?${query}` : ''}`;
}

// node-postgres's own conversions, so both clients give the same rows for the same statements
const pgRequire = createRequire(require.resolve('pg'));
const prepareValue = (require('pg/lib/utils') as { prepareValue(value: unknown): string | null })
  .prepareValue;
const types = pgRequire('pg-types') as {
  getTypeParser(oid: number, format: 'text'): (text: string) => unknown;
};
const INT8 = 20;
// bigint: seqs and epochs stay far below 2^53 (pg-worker.ts parses them the same way)
const parserOf = (oid: number) => (oid === INT8 ? Number : types.getTypeParser(oid, 'text'));

/**
 * node-libpq closes a finished connection's poll handle, which libuv completes in its next turn,
 * yet frees the handle with the connection: collected before then, the process aborts in
 * uv__finish_close. A finished connection is kept (by the timer's closure) until a later turn.
 */
const keepUntilLaterTurn = (connection: Libpq) => {
  setTimeout(() => void connection, 0).unref();
};
const finish = (connection: Libpq) => {
  connection.finish();
  keepUntilLaterTurn(connection);
};

/** libpq's messages run over several lines ("…failed: Connection refused\n\tIs the server running…"). */
const oneLine = (message: string) => message.trim().split(/\s*\n\s*/)[0] ?? message;

/**
 * PostgreSQL through libpq on the calling thread: a synchronous round trip with no thread between
 * (sync-client.ts uses it for queries when libpq is there; its worker thread still renews leases
 * and listens). Each statement with parameters is prepared once per connection.
 */
export class NativePg {
  private connection: Libpq | null = null;
  private prepared = new Map<string, string>();
  /** The connection a transaction was begun on: if it is lost, so is the transaction. */
  private transactionOn: Libpq | null = null;
  private inTransaction = false;

  constructor(
    private readonly Libpq: LibpqClass,
    private readonly conninfo: string,
  ) {}

  query<Row = Record<string, unknown>>(sql: string, params: unknown[] = []): Row[] {
    const connection = this.connected();
    if (params.length === 0) connection.exec(sql);
    else connection.execPrepared(this.statement(connection, sql, params.length), params.map(prepareValue));
    this.check(connection);
    return rows(connection) as Row[];
  }

  begin(): void {
    this.query('BEGIN');
    this.transactionOn = this.connection;
    this.inTransaction = true;
  }

  commit(): void {
    this.end('COMMIT');
  }

  rollback(): void {
    this.end('ROLLBACK');
  }

  close(): void {
    this.drop();
  }

  private end(command: 'COMMIT' | 'ROLLBACK') {
    const lost = this.transactionOn !== this.connection;
    this.inTransaction = false;
    this.transactionOn = null;
    if (!lost) this.query(command);
    else if (command === 'COMMIT')
      throw lostConnection('the connection was lost before the transaction committed');
  }

  private connected(): Libpq {
    if (this.inTransaction) {
      if (this.connection !== this.transactionOn || !this.connection)
        throw lostConnection('the connection was lost in the middle of a transaction');
      return this.connection;
    }
    // broken while idle (the server restarted, or ended this session): nothing was sent on it yet,
    // so the statement is safe to send on a new one. Reading what is there takes the server's
    // goodbye, then the end of the stream, which marks the connection bad.
    if (this.connection) {
      this.connection.consumeInput();
      this.connection.consumeInput();
      if (this.connection.transactionStatus() === 4) this.drop();
    }
    this.connection ??= this.connect();
    return this.connection;
  }

  private connect(): Libpq {
    const connection = new this.Libpq();
    try {
      connection.connectSync(this.conninfo);
    } catch (error) {
      // connectSync finishes the connection itself
      keepUntilLaterTurn(connection);
      throw new PgQueryError({ message: oneLine((error as Error).message), code: '08001' });
    }
    this.prepared = new Map();
    return connection;
  }

  private drop() {
    if (this.connection) finish(this.connection);
    this.connection = null;
  }

  private statement(connection: Libpq, sql: string, parameters: number): string {
    const known = this.prepared.get(sql);
    if (known) return known;
    const name = `troupe_${this.prepared.size + 1}`;
    connection.prepare(name, sql, parameters);
    this.check(connection);
    this.prepared.set(sql, name);
    return name;
  }

  /** Throws what the last statement failed with; a broken connection is dropped (the next call connects again). */
  private check(connection: Libpq) {
    const status = connection.resultStatus();
    if (status === 'PGRES_TUPLES_OK' || status === 'PGRES_COMMAND_OK' || status === 'PGRES_EMPTY_QUERY')
      return;
    const fields = connection.resultErrorFields();
    const code = fields?.sqlState;
    if (!code || connection.transactionStatus() === 4 || /^(08|57P)/.test(code)) {
      const message =
        fields?.messagePrimary ?? oneLine(connection.errorMessage() || 'the connection was lost');
      this.drop();
      throw lostConnection(message, code);
    }
    throw new PgQueryError({ message: fields?.messagePrimary ?? oneLine(connection.errorMessage()), code });
  }
}

const lostConnection = (message: string, code = '08006') => new PgQueryError({ message, code });

function rows(connection: Libpq): Record<string, unknown>[] {
  const count = connection.ntuples();
  if (count === 0) return [];
  const columns = connection.nfields();
  const names: string[] = [];
  const parsers: ((text: string) => unknown)[] = [];
  for (let column = 0; column < columns; column++) {
    names.push(connection.fname(column));
    parsers.push(parserOf(connection.ftype(column)));
  }
  const result: Record<string, unknown>[] = new Array(count);
  for (let row = 0; row < count; row++) {
    const record: Record<string, unknown> = {};
    for (let column = 0; column < columns; column++)
      record[names[column]!] = connection.getisnull(row, column)
        ? null
        : parsers[column]!(connection.getvalue(row, column));
    result[row] = record;
  }
  return result;
}
