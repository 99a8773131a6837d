import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { EventStore } from '../src/core/event-store.js';
import { TASK_CREATED } from '../src/engine/test-pipelines.js';
import { LATEST_VERSION, MIGRATIONS } from '../src/store/postgres/migrations.js';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import { openSqliteStore, SQLITE_SCHEMA_VERSION } from '../src/store/sqlite/sqlite-store.js';
import { dropSchemas, PG_URL, postgresUnreachable, scratchSchemaName } from './support/postgres.js';
import { project, repoRoot, troupe } from './support/troupe.js';

/**
 * The store's administration through the real binary, on SQLite and PostgreSQL: a schema newer
 * than this troupe is refused (rolling upgrades), each event records the troupe that appended
 * it, `db status` gates a rollout, and `db prune` deletes old finished tasks only.
 */

const VERSION = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string })
  .version;
const unreachable = await postgresUnreachable();
const schemas = new Set<string>();
afterAll(() => dropSchemas(schemas));

const quick = `agents:
  - id: only
    runtime: command
    command: [echo, done]
`;

interface Backend {
  name: string;
  unavailable: string | null;
  /** A fresh project and its store: the env that points troupe at it, and the store opened here. */
  fresh(): {
    dir: string;
    env: Record<string, string>;
    open(): EventStore;
    sql<T>(query: string): Promise<T[]>;
  };
}

const sqlite: Backend = {
  name: 'SQLite',
  unavailable: null,
  fresh() {
    const dir = project({ 'p.yaml': quick });
    const file = join(dir, '.troupe', 'troupe.db');
    return {
      dir,
      env: {},
      open: () => openSqliteStore(file),
      sql: async <T>(query: string) => {
        const db = new Database(file);
        try {
          if (/^\s*select/i.test(query)) return db.prepare(query).all() as T[];
          db.exec(query);
          return [];
        } finally {
          db.close();
        }
      },
    };
  },
};

const postgres: Backend = {
  name: 'PostgreSQL',
  unavailable: unreachable,
  fresh() {
    const schema = scratchSchemaName();
    schemas.add(schema);
    const url = new URL(PG_URL);
    url.searchParams.set('schema', schema);
    return {
      dir: project({ 'p.yaml': quick }),
      env: { TROUPE_STORE: url.toString() },
      open: () => openPostgresStore(url.toString(), { schema }),
      sql: async <T>(query: string) => {
        const client = new pg.Client({ connectionString: PG_URL });
        await client.connect();
        try {
          await client.query(`SET search_path = ${schema}`);
          return (await client.query(query)).rows as T[];
        } finally {
          await client.end();
        }
      },
    };
  },
};

/** Days ago, as the ISO time an event would carry. */
const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();

for (const backend of [sqlite, postgres])
  describe.skipIf(backend.unavailable)(
    `the store's administration on ${backend.name}${backend.unavailable ? `: ${backend.unavailable}` : ''}`,
    () => {
      it('records the troupe version with every event it appends', async () => {
        const store = backend.fresh();
        const run = await troupe(store.dir, ['run', 'go', '--file', 'p.yaml', '--json'], store.env);
        expect(run.code).toBe(0);
        const id = (JSON.parse(run.stdout) as { id: string }).id;
        const rows = await store.sql<{ engine: string | null }>(
          `SELECT engine FROM events WHERE task_id = '${id}'`,
        );
        expect(rows.length).toBeGreaterThan(2);
        expect(new Set(rows.map((row) => row.engine))).toEqual(new Set([VERSION]));
        const opened = store.open();
        try {
          expect([...opened.events(id)].map((event) => event.engine)).toEqual(rows.map(() => VERSION));
        } finally {
          opened.close();
        }
      });

      it('refuses a schema a newer troupe migrated, with one line and exit code 9, and writes nothing', async () => {
        const { dir, env, open, sql } = backend.fresh();
        open().close();
        const newer = backend === sqlite ? SQLITE_SCHEMA_VERSION + 1 : LATEST_VERSION + 1;
        const known = backend === sqlite ? SQLITE_SCHEMA_VERSION : LATEST_VERSION;
        if (backend === sqlite) await sql(`PRAGMA user_version = ${newer}`);
        else
          await sql(`INSERT INTO schema_migrations (version, name) VALUES (${newer}, 'from a newer troupe')`);
        const line = `troupe: the store's schema is at version ${newer}, newer than this troupe knows (${known}): upgrade troupe (this is ${VERSION}; `;
        for (const args of [
          ['run', 'go', '--file', 'p.yaml'],
          ['list'],
          ['db', 'migrate'],
          ['db', 'status'],
        ]) {
          const result = await troupe(dir, args, env);
          expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(9);
          expect(result.stderr.split('\n')[0]).toContain(line);
        }
        const tasks = await sql<{ n: number | string }>('SELECT count(*) AS n FROM tasks');
        expect(Number(tasks[0]!.n)).toBe(0);
        if (backend === postgres) {
          const versions = await sql<{ version: number }>(
            'SELECT version FROM schema_migrations ORDER BY version',
          );
          expect(versions.map((row) => row.version)).toEqual([...MIGRATIONS.map((m) => m.version), newer]);
        }
      });

      it('db prune deletes the finished tasks whose last event is older than asked, never an unfinished one', async () => {
        const { dir, env, open, sql } = backend.fresh();
        const store = open();
        const task = (
          events: Parameters<EventStore['append']>[1],
          status: 'completed' | 'failed' | 'cancelled' | 'running',
          at: string,
        ) => {
          const { taskId } = store.createTask(TASK_CREATED);
          store.append(taskId, events, { status }, at);
          return taskId;
        };
        const oldDone = task([{ type: 'task_completed' }], 'completed', daysAgo(40));
        const oldCancelled = task([{ type: 'task_cancelled', reason: 'stop' }], 'cancelled', daysAgo(31));
        const oldRunning = task(
          [{ type: 'stage_started', stage: 1, activation: 'a1', agent: 'a', input: 'x', attempt: 1 }],
          'running',
          daysAgo(60),
        );
        const recentDone = task([{ type: 'task_completed' }], 'completed', daysAgo(1));
        store.close();

        const dry = await troupe(dir, ['db', 'prune', '--older-than', '30d', '--dry-run'], env);
        expect(dry.code, dry.stderr).toBe(0);
        expect(dry.stdout).toContain(`${oldDone}  completed  p  last event `);
        expect(dry.stdout).toContain(`${oldCancelled}  cancelled  p`);
        expect(dry.stdout).not.toContain(oldRunning);
        expect(dry.stdout).not.toContain(recentDone);
        expect(dry.stdout).toMatch(/^would delete 2 finished tasks \(last event before /m);
        const ids = (rows: Array<{ id: string }>) => rows.map((row) => row.id).sort();
        expect(ids(await sql<{ id: string }>('SELECT id FROM tasks'))).toEqual(
          [oldDone, oldCancelled, oldRunning, recentDone].sort(),
        );

        const pruned = await troupe(dir, ['db', 'prune', '--older-than', '30d', '--json'], env);
        expect(pruned.code, pruned.stderr).toBe(0);
        const answer = JSON.parse(pruned.stdout) as {
          count: number;
          dryRun: boolean;
          tasks: Array<{ id: string }>;
        };
        expect(answer).toMatchObject({ count: 2, dryRun: false });
        expect(ids(answer.tasks)).toEqual([oldDone, oldCancelled].sort());
        expect(ids(await sql<{ id: string }>('SELECT id FROM tasks'))).toEqual(
          [oldRunning, recentDone].sort(),
        );
        const left = await sql<{ task_id: string }>('SELECT DISTINCT task_id FROM events');
        expect(left.map((row) => row.task_id).sort()).toEqual([oldRunning, recentDone].sort());

        const again = await troupe(dir, ['db', 'prune', '--older-than', '30d'], env);
        expect(again.stdout).toMatch(/^deleted 0 finished tasks/);
        const bad = await troupe(dir, ['db', 'prune', '--older-than', 'a month'], env);
        expect(bad.code).toBe(2);
        expect(bad.stderr).toContain(
          "troupe: invalid --older-than 'a month' (examples: 30d, 12h, 1d12h, 90m)",
        );
      });
    },
  );

describe.skipIf(unreachable)('db status as a rollout gate', () => {
  it('exits 1 while migrations are pending, 0 once applied; --json keeps pending', async () => {
    const { dir, env } = postgres.fresh();
    const before = await troupe(dir, ['db', 'status', '--json'], env);
    expect(before.code).toBe(1);
    expect((JSON.parse(before.stdout) as { pending: number[] }).pending).toEqual(
      MIGRATIONS.map((m) => m.version),
    );
    const text = await troupe(dir, ['db', 'status'], env);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('run `troupe db migrate` to apply the pending ones');
    expect((await troupe(dir, ['db', 'migrate'], env)).code).toBe(0);
    const after = await troupe(dir, ['db', 'status', '--json'], env);
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout)).toMatchObject({
      pending: [],
      version: LATEST_VERSION,
      known: LATEST_VERSION,
    });
    expect((await troupe(dir, ['db', 'status', '--help'])).stdout).toContain('1 migrations pending');
  });
});
