import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../src/store/postgres/migrations.js';
import { SQLITE_SCHEMA_VERSION } from '../src/store/sqlite/sqlite-store.js';
import { dropSchemas, PG_URL, postgresUnreachable, scratchSchemaName } from './support/postgres.js';
import { serve } from './support/serve.js';
import { example, project, type TaskJson, troupe } from './support/troupe.js';

const VERSIONS = MIGRATIONS.map((step) => step.version);

const unreachable = await postgresUnreachable();
const schemas = new Set<string>();
afterAll(() => dropSchemas(schemas));

// trust auth on the test server accepts any password: one in the URL is there to be kept out of output
const PASSWORD = 'pw-s3cret-91f4';

/** The store URL of a fresh schema, with a password in it. */
function storeUrl(): string {
  const schema = scratchSchemaName();
  schemas.add(schema);
  const url = new URL(PG_URL);
  url.password = PASSWORD;
  url.searchParams.set('schema', schema);
  return url.toString();
}

const json = <T>(stdout: string) => JSON.parse(stdout) as T;

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
}

describe.skipIf(unreachable)(
  `troupe on PostgreSQL (the real binary)${unreachable ? `: ${unreachable}` : ''}`,
  () => {
    it('runs a scripted pipeline on the store it is given; status, list and usage read it back from there', async () => {
      const dir = project();
      const store = storeUrl();
      const script = ['--file', example('dev-team'), '--script', example('dev-team', 'script.yaml')];
      const run = await troupe(dir, ['--store', store, 'run', 'Add a /health endpoint', ...script, '--json']);
      expect(run.code, run.stderr).toBe(0);
      const task = json<TaskJson>(run.stdout);
      expect(task.status).toBe('completed');
      // nothing went to SQLite
      expect(existsSync(join(dir, '.troupe', 'troupe.db'))).toBe(false);

      // the flag after the command, the environment and the config all pick the same store
      const status = await troupe(dir, ['status', task.id, '--json', '--store', store]);
      expect(status.code, status.stderr).toBe(0);
      expect(json(status.stdout)).toEqual(task);
      const list = await troupe(dir, ['list', '--json'], { TROUPE_STORE: store });
      expect(json<Array<{ id: string }>>(list.stdout).map((t) => t.id)).toEqual([task.id]);
      const configured = project({ '.troupe/config.yaml': `store: ${store}\n` });
      const usage = await troupe(configured, ['usage', '--json']);
      expect(usage.code, usage.stderr).toBe(0);
      expect(usage.stdout).toContain('"developer"');
      // an empty SQLite store for the same project shows none of it
      const sqlite = await troupe(dir, ['list', '--json']);
      expect(json(sqlite.stdout)).toEqual([]);

      for (const output of [run, status, list, usage])
        expect(output.stdout + output.stderr).not.toContain(PASSWORD);
      const human = await troupe(dir, ['--store', store, 'status', task.id]);
      expect(human.code).toBe(0);
      expect(human.stdout + human.stderr).not.toContain(PASSWORD);

      // the dashboard's server shows the task, and says which store without the password
      const served = await serve(dir, ['--store', store]);
      try {
        const answer = await (await fetch(`${served.url}api/tasks`)).text();
        expect(JSON.parse(answer).tasks.map((t: { id: string }) => t.id)).toEqual([task.id]);
        await until(() => served.stdout().includes('dashboard:'));
        expect(served.stdout()).toMatch(
          /^store: postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:5432\/postgres \(schema troupe_test_/m,
        );
        expect(answer + served.stdout()).not.toContain(PASSWORD);
      } finally {
        await served.stop();
      }
    });

    it('db migrate applies each migration once, db status shows them; the flag beats the environment', async () => {
      const dir = project();
      const store = storeUrl();
      const before = await troupe(dir, ['db', 'status', '--json'], { TROUPE_STORE: store });
      expect(json<{ pending: number[] }>(before.stdout).pending).toEqual(VERSIONS);
      // two operators at once: one applies, the other waits for it and finds nothing to do
      const both = await Promise.all(
        [1, 2].map(() => troupe(dir, ['db', 'migrate', '--json', '--store', store])),
      );
      expect(both.map((r) => r.code)).toEqual([0, 0]);
      expect(both.flatMap((r) => json<{ applied: number[] }>(r.stdout).applied)).toEqual(VERSIONS);
      const again = await troupe(dir, ['db', 'migrate'], { TROUPE_STORE: 'postgres://nobody@127.0.0.1:1/x' });
      expect(again.code).toBe(8); // the environment's store, unreachable
      const noop = await troupe(dir, ['--store', store, 'db', 'migrate'], {
        TROUPE_STORE: 'postgres://nobody@127.0.0.1:1/x',
      });
      expect(noop.stdout).toBe('up to date: nothing to apply');

      const status = await troupe(dir, ['db', 'status', '--json', '--store', store]);
      expect(status.code).toBe(0);
      expect(status.stdout).not.toContain(PASSWORD);
      expect(json(status.stdout)).toMatchObject({
        kind: 'postgres',
        url: expect.stringContaining(':***@'),
        schema: new URL(store).searchParams.get('schema'),
        client: expect.stringMatching(/^(native|bridge)$/),
        migrations: VERSIONS.map((version) => ({
          version,
          appliedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        })),
        pending: [],
      });
      const sqlite = await troupe(dir, ['db', 'status', '--json']);
      expect(json(sqlite.stdout)).toEqual({
        kind: 'sqlite',
        path: join(dir, '.troupe', 'troupe.db'),
        exists: false,
        userVersion: null,
        known: SQLITE_SCHEMA_VERSION,
      });
    });

    it('TROUPE_PG_CLIENT chooses the client: both serve every command; another value is a usage error', async () => {
      const dir = project();
      const store = storeUrl();
      for (const client of ['native', 'bridge']) {
        const list = await troupe(dir, ['--store', store, 'list', '--json'], { TROUPE_PG_CLIENT: client });
        expect(list.code, list.stderr).toBe(0);
        expect(json(list.stdout)).toEqual([]);
        const status = await troupe(dir, ['--store', store, 'db', 'status', '--json'], {
          TROUPE_PG_CLIENT: client,
        });
        expect(json(status.stdout)).toMatchObject({ kind: 'postgres', client });
      }
      const wrong = await troupe(dir, ['--store', store, 'list'], { TROUPE_PG_CLIENT: 'fast' });
      expect(wrong.code).toBe(2);
      expect(wrong.stderr.trim()).toBe("troupe: TROUPE_PG_CLIENT is 'fast': it must be native or bridge");
    });

    it('a store it cannot use is one line, without the password, and its own exit code', async () => {
      const dir = project();
      const down = new URL(storeUrl());
      down.port = '1';
      const noDatabase = new URL(storeUrl());
      noDatabase.pathname = '/troupe_no_such_database';
      for (const [url, code, says] of [
        // node-postgres's words or libpq's, whichever client serves the store
        [down.toString(), 8, /ECONNREFUSED|Connection refused/],
        [noDatabase.toString(), 8, /database "troupe_no_such_database" does not exist/],
        [`mysql://root:${PASSWORD}@127.0.0.1/x`, 2, /'mysql' is not a store/],
        [`postgres://root:${PASSWORD}@127.0.0.1/x?schema=Not-A-Name`, 2, /not a plain lower-case SQL name/],
      ] as const) {
        const result = await troupe(dir, ['--store', url, 'list']);
        expect(result.code, result.stderr).toBe(code);
        expect(result.stderr).toMatch(says);
        expect(result.stderr.split('\n')[0]).toMatch(/^troupe: .*:\*\*\*@/);
        expect(result.stderr).not.toContain(PASSWORD);
        expect(result.stderr).not.toMatch(/\n\s+at /);
      }
    });
  },
);
