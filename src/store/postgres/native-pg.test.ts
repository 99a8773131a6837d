import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { endSessions, PG_URL, postgresUnreachable } from '../../../test/support/postgres.js';
import { libpqConninfo, loadLibpq, NativePg } from './native-pg.js';
import { PgQueryError } from './pg-query-error.js';

describe('libpqConninfo', () => {
  it('adds the keywords to the URL, percent-encoding their spaces, and keeps the credentials', () => {
    expect(
      libpqConninfo('postgres://me:s%40cret@db.example:6543/troupe?sslmode=require', {
        options: '-c search_path=team -c statement_timeout=30000',
        application_name: 'troupe:team',
      }),
    ).toBe(
      'postgres://me:s%40cret@db.example:6543/troupe?sslmode=require&options=-c%20search_path%3Dteam%20-c%20statement_timeout%3D30000&application_name=troupe%3Ateam',
    );
  });

  it("replaces the URL's own value of a keyword it sets", () => {
    expect(libpqConninfo('postgresql://localhost/db?connect_timeout=60', { connect_timeout: '10' })).toBe(
      'postgresql://localhost/db?connect_timeout=10',
    );
  });

  it('gives null for a URL with a parameter only node-postgres knows', () => {
    expect(libpqConninfo('postgres://localhost/db?ssl=true', {})).toBeNull();
  });
});

const Libpq = loadLibpq();
const unreachable = await postgresUnreachable();

describe.skipIf(!Libpq || unreachable)('NativePg, on the real PostgreSQL', () => {
  const open: NativePg[] = [];
  const connect = (name = `troupe-native-test-${process.pid}`) => {
    const client = new NativePg(Libpq!, libpqConninfo(PG_URL, { application_name: name })!);
    open.push(client);
    return client;
  };
  afterEach(() => {
    for (const client of open.splice(0)) client.close();
  });

  async function viaPg<T>(text: string, params: unknown[] = []): Promise<T[]> {
    const client = new pg.Client({ connectionString: PG_URL });
    client.setTypeParser(20, Number);
    await client.connect();
    try {
      return (await client.query(text, params)).rows as T[];
    } finally {
      await client.end();
    }
  }
  it('gives the rows node-postgres gives for the same statement, with and without parameters', async () => {
    const sql = `SELECT 1::int4 AS int, 9007199254740::int8 AS big, 'a b'::text AS text, true AS yes,
      NULL::text AS nothing, '{"k":[1,"x"]}'::jsonb AS json, '2026-12-02T10:00:00.123Z'::timestamptz AS at,
      ARRAY['x', NULL, 'y']::text[] AS list, 1.50::numeric AS num`;
    expect(connect().query(sql)).toEqual(await viaPg(sql));
    const withParams = 'SELECT $1::text[] AS list, $2::jsonb AS json, $3::int8 AS big, $4::text AS nothing';
    const params = [['a', 'b c'], JSON.stringify({ k: 1 }), 42, null];
    expect(connect().query(withParams, params)).toEqual(await viaPg(withParams, params));
  });

  it("fails with PostgreSQL's SQLSTATE and its one-line message, and keeps the connection", () => {
    const client = connect();
    const failure = (body: () => unknown) => {
      try {
        body();
      } catch (error) {
        return error;
      }
      throw new Error('it did not fail');
    };
    expect(failure(() => client.query('SELECT 1 / 0'))).toMatchObject({
      code: '22012',
      message: 'division by zero',
    });
    expect(failure(() => client.query('SELECT * FROM no_such_table WHERE x = $1', [1]))).toMatchObject({
      code: '42P01',
      message: 'relation "no_such_table" does not exist',
    });
    expect(client.query('SELECT 2 AS two')).toEqual([{ two: 2 }]);
  });

  it('prepares a statement with parameters once per connection', async () => {
    const client = connect();
    const sql = 'SELECT $1::int4 + 1 AS n';
    for (let i = 0; i < 3; i++) expect(client.query(sql, [i])).toEqual([{ n: i + 1 }]);
    expect(
      client.query('SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1', [sql]),
    ).toEqual([{ n: 1 }]);
  });

  it('connects again, unseen, when its connection was ended while idle', async () => {
    const name = `troupe-native-idle-${process.pid}`;
    const client = connect(name);
    const [first] = client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    await endSessions(name);
    const [second] = client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid', []);
    expect(second!.pid).not.toBe(first!.pid);
  });

  it('fails a transaction whose connection was lost, and works again after it', async () => {
    const name = `troupe-native-tx-${process.pid}`;
    const client = connect(name);
    client.begin();
    client.query('SELECT 1');
    await endSessions(name);
    expect(() => client.query('SELECT 2')).toThrow(PgQueryError);
    expect(() => client.query('SELECT 3')).toThrow(/lost in the middle of a transaction/);
    expect(() => client.commit()).toThrow(/lost before the transaction committed/);
    expect(client.query('SELECT 4 AS four')).toEqual([{ four: 4 }]);
  });

  it('tells a server out of reach in one line, as unable to connect (08001)', () => {
    const client = new NativePg(Libpq!, 'postgres://postgres@127.0.0.1:1/postgres?connect_timeout=3');
    expect(() => client.query('SELECT 1')).toThrow(
      expect.objectContaining({
        code: '08001',
        message: expect.stringMatching(/^[^\n]*Connection refused$/),
      }),
    );
  });

  it('survives the garbage collector taking closed connections (node-libpq frees their handle early)', () => {
    const compiled = fileURLToPath(new URL('../../../dist/store/postgres/native-pg.js', import.meta.url));
    expect(existsSync(compiled), 'npm run build makes dist/').toBe(true);
    const script = `
      const { NativePg, loadLibpq, libpqConninfo } = await import(${JSON.stringify(compiled)});
      const Libpq = loadLibpq();
      for (let i = 0; i < 20; i++) {
        const client = new NativePg(Libpq, libpqConninfo(${JSON.stringify(PG_URL)}, {}));
        client.query('SELECT 1');
        client.close();
        globalThis.gc();
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
      globalThis.gc();
      console.log('ok');`;
    const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    expect(out.trim()).toBe('ok');
  });
});
