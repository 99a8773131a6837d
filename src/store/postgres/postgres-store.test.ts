import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  dropSchemas,
  endSessions,
  PG_URL,
  postgresUnreachable,
  scratchSchemaName,
} from '../../../test/support/postgres.js';
import { LeaseLostError, StoreTooNewError, StoreUnavailableError } from '../../core/errors.js';
import type { EventStore } from '../../core/event-store.js';
import { TASK_CREATED } from '../../engine/test-pipelines.js';
import { packageVersion } from '../../package-root.js';
import { storeContract } from '../contract.js';
import { LATEST_VERSION, MIGRATIONS } from './migrations.js';
import { loadLibpq } from './native-pg.js';
import {
  connectPostgres,
  openPostgresStore,
  type PgClient,
  type PostgresStoreOptions,
  taskListSql,
} from './postgres-store.js';

const unreachable = await postgresUnreachable();
const schemas = new Set<string>();
afterAll(() => dropSchemas(schemas));

/** Each client runs the whole suite (libpq's only where the package is installed). */
const PG_CLIENTS: PgClient[] = loadLibpq() ? ['native', 'bridge'] : ['bridge'];
/** The client of the suite running. */
let currentClient: PgClient = 'bridge';

function openScratch(options: PostgresStoreOptions = {}): EventStore {
  const schema = options.schema ?? scratchSchemaName();
  schemas.add(schema);
  return openPostgresStore(PG_URL, { client: currentClient, ...options, schema });
}

const created = TASK_CREATED;
const output = (text: string) => ({ type: 'stage_output' as const, stage: 1, text });
// holders on other machines: their pids cannot be checked from here, so they count as alive
const workerA = { pid: 101, host: 'machine-a', worker: 'w1' };
const workerB = { pid: 202, host: 'machine-b', worker: 'w1' };

async function sql<T>(schema: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`gave up waiting for ${what}`);
}

if (unreachable) {
  describe.skip(`postgres store: ${unreachable}`, () => {
    it('needs PostgreSQL', () => {});
  });
} else {
  for (const client of PG_CLIENTS)
    describe(`the ${client} client`, () => {
      beforeAll(() => {
        currentClient = client;
      });
      storeContract('postgres', () => openScratch());

      describe('postgres store: many workers on one database', () => {
        const open: EventStore[] = [];
        afterEach(() => {
          for (const store of open.splice(0)) store.close();
        });
        const two = (a: PostgresStoreOptions, b: PostgresStoreOptions = a) => {
          const schema = scratchSchemaName();
          const stores = [openScratch({ ...a, schema }), openScratch({ ...b, schema })] as const;
          open.push(...stores);
          return { schema, stores };
        };

        it('of two workers racing for one lease, one gets it; the other gets it only once it expired', async () => {
          // A never renews (as if stalled or cut off): its lease runs out after 400 ms
          const {
            stores: [a, b],
          } = two({ leaseMs: 400, renewMs: 60_000 }, { leaseMs: 60_000 });
          const { taskId } = a.createTask(created);
          expect(a.tryLease(taskId, workerA)).toBe(true);
          expect(b.tryLease(taskId, workerB)).toBe(false);
          expect(b.leaseHolder(taskId)).toEqual(workerA);
          expect(b.lease(taskId)).toEqual({ holder: workerA, alive: true });
          await until(() => b.leaseHolder(taskId) === null, "A's lease to expire");
          // expired, it is still on record: its owner shows as gone until someone takes it
          expect(b.lease(taskId)).toEqual({ holder: workerA, alive: false });
          expect(b.tryLease(taskId, workerB)).toBe(true);
          expect(a.tryLease(taskId, workerA)).toBe(false);
          expect(a.leaseHolder(taskId)).toEqual(workerB);
        });

        it('refuses, in the database, every write of a worker whose lease was taken over', async () => {
          const {
            schema,
            stores: [a, b],
          } = two({ leaseMs: 400, renewMs: 60_000 }, { leaseMs: 60_000 });
          const lost: string[] = [];
          a.onLeaseLost?.((taskId) => lost.push(taskId));
          const { taskId } = a.createTask(created);
          expect(a.tryLease(taskId, workerA)).toBe(true);
          a.append(taskId, [output('from A while it holds the lease')], { status: 'running' });
          await until(() => b.leaseHolder(taskId) === null, "A's lease to expire");
          expect(b.tryLease(taskId, workerB)).toBe(true);

          expect(() => a.append(taskId, [output('from A, too late')], { status: 'running' })).toThrow(
            LeaseLostError,
          );
          expect(() =>
            a.restart(taskId, 1, { type: 'task_restarted', fromStage: 1 }, { status: 'running' }),
          ).toThrow(LeaseLostError);
          expect(lost).toEqual([taskId, taskId]);
          b.append(taskId, [output('from B')], { status: 'running' });
          expect([...b.events(taskId)].map((e) => (e.type === 'stage_output' ? e.text : e.type))).toEqual([
            'task_created',
            'from A while it holds the lease',
            'from B',
          ]);
          // the refusal is the database's: the same stale epoch, written by hand, is refused too
          const [lease] = await sql<{ epoch: string }>(
            schema,
            'SELECT epoch FROM leases WHERE task_id = $1',
            [taskId],
          );
          await expect(
            sql(
              schema,
              `SELECT troupe_append($1, ARRAY['stage_output'], ARRAY['{}'], 'x', 'running', $2, NULL, NULL)`,
              [taskId, Number(lease!.epoch) - 1],
            ),
          ).rejects.toMatchObject({ code: 'TR423' });
        });

        it('orders a takeover after a write in flight: the new holder reads it, and the next stale write is refused', async () => {
          const {
            schema,
            stores: [a],
          } = two({ leaseMs: 60_000 });
          const { taskId } = a.createTask(created);
          expect(a.tryLease(taskId, workerA)).toBe(true);
          const [{ epoch } = { epoch: 0 }] = await sql<{ epoch: number }>(
            schema,
            'SELECT epoch::int FROM leases WHERE task_id = $1',
            [taskId],
          );
          // worker A's append, begun and not yet committed; worker B's takeover meanwhile
          const connect = async () => {
            const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
            await client.connect();
            return client;
          };
          const [writer, taker] = [await connect(), await connect()];
          try {
            const append = (text: string) =>
              writer.query(
                `SELECT troupe_append($1, ARRAY['stage_output'], ARRAY[$2], 'x', 'running', $3, NULL, NULL)`,
                [taskId, JSON.stringify(output(text)), epoch],
              );
            await writer.query('BEGIN');
            await append('in flight');
            let tookOver: number | null | undefined;
            const takeover = taker
              .query(`SELECT troupe_take_lease($1, 303, 'machine-c', NULL, $2, 60000) AS epoch`, [
                taskId,
                epoch,
              ])
              .then(({ rows }) => {
                tookOver = rows[0].epoch;
              });
            await new Promise((resolve) => setTimeout(resolve, 300));
            expect(tookOver).toBeUndefined(); // waits for the write lock
            await writer.query('COMMIT');
            await takeover;
            expect(Number(tookOver)).toBe(epoch + 1);
            expect([...a.events(taskId)].map((e) => (e.type === 'stage_output' ? e.text : e.type))).toEqual([
              'task_created',
              'in flight',
            ]);
            await expect(append('after the takeover')).rejects.toMatchObject({ code: 'TR423' });
          } finally {
            await Promise.all([writer.end(), taker.end()]);
          }
        });

        it('a worker that released its lease writes without it, and anyone may take the lease again', () => {
          const {
            stores: [a, b],
          } = two({});
          const { taskId } = a.createTask(created);
          expect(a.tryLease(taskId, workerA)).toBe(true);
          a.releaseLease(taskId, workerA);
          expect(b.tryLease(taskId, workerB)).toBe(true);
          // A no longer claims the task: its append (a cancel from another shell, say) is not fenced
          a.append(taskId, [{ type: 'task_cancelled', reason: 'stop' }], { status: 'cancelled' });
          expect(b.task(taskId)?.status).toBe('cancelled');
        });

        it('gives the lease back in the append that ends the task, before its holder lets go', () => {
          const {
            schema,
            stores: [a, b],
          } = two({});
          const { taskId } = a.createTask(created);
          expect(a.tryLease(taskId, workerA)).toBe(true);
          a.append(taskId, [output('one')], { status: 'running' });
          expect(b.leaseHolder(taskId)).toEqual(workerA);
          a.append(taskId, [{ type: 'task_completed' }], { status: 'completed' });
          expect(b.leaseHolder(taskId)).toBeNull();
          a.releaseLease(taskId, workerA);
          expect(b.task(taskId)?.status).toBe('completed');
          // taken again (a restart of the ended task, say), it is let go by its holder as before
          expect(a.tryLease(taskId, workerA)).toBe(true);
          expect(b.leaseHolder(taskId)).toEqual(workerA);
          a.releaseLease(taskId, workerA);
          expect(b.leaseHolder(taskId)).toBeNull();
          // the database keeps the refusals' reasons apart: an ended task, a lease lost, no task
          return Promise.all([
            expect(
              sql(
                schema,
                `SELECT troupe_append($1, ARRAY['stage_output'], ARRAY['{}'], 'x', 'running', NULL, NULL, NULL)`,
                [taskId],
              ),
            ).rejects.toMatchObject({ code: 'TR409' }),
            expect(
              sql(
                schema,
                `SELECT troupe_append($1, ARRAY['stage_output'], ARRAY['{}'], 'x', 'running', 0, NULL, NULL)`,
                [taskId],
              ),
            ).rejects.toMatchObject({ code: 'TR423' }),
            expect(
              sql(
                schema,
                `SELECT troupe_append('T-NOSUCH', ARRAY['stage_output'], ARRAY['{}'], 'x', 'running', NULL, NULL, NULL)`,
              ),
            ).rejects.toMatchObject({ code: 'TR404' }),
          ]);
        });

        it('refuses a lease holder whose last events the database no longer has, as if its lease were lost', async () => {
          const {
            schema,
            stores: [a, b],
          } = two({});
          const lost: string[] = [];
          a.onLeaseLost?.((taskId) => lost.push(taskId));
          const { taskId } = a.createTask(created);
          expect(a.tryLease(taskId, workerA)).toBe(true);
          a.append(taskId, [output('kept')], { status: 'running' });
          const [gone] = a.append(taskId, [output('lost')], { status: 'running' });
          // what a crash with synchronous_commit = off, or a failover to a standby that was behind,
          // leaves: the database answered the last commit, and no longer has it
          await sql(schema, 'DELETE FROM events WHERE seq = $1', [gone!.seq]);
          expect(() => a.append(taskId, [output('built on the lost one')], { status: 'running' })).toThrow(
            LeaseLostError,
          );
          expect(lost).toEqual([taskId]);
          const texts = () => [...b.events(taskId)].map((e) => (e.type === 'stage_output' ? e.text : e.type));
          expect(texts()).toEqual(['task_created', 'kept']);
          // the task goes on from what the database kept, under a lease taken again
          a.releaseLease(taskId, workerA);
          expect(b.tryLease(taskId, workerB)).toBe(true);
          b.append(taskId, [output('again')], { status: 'running' });
          b.append(taskId, [output('and on')], { status: 'running' });
          expect(texts()).toEqual(['task_created', 'kept', 'again', 'and on']);
        });
        it('renews its leases from its worker thread, so they outlive their duration', async () => {
          const {
            schema,
            stores: [a, b],
          } = two({ leaseMs: 600, renewMs: 100 });
          const { taskId } = a.createTask(created);
          expect(a.tryLease(taskId, workerA)).toBe(true);
          const expiry = async () =>
            Date.parse(
              (
                await sql<{ at: Date }>(schema, 'SELECT expires_at AS at FROM leases WHERE task_id = $1', [
                  taskId,
                ])
              )[0]!.at.toISOString(),
            );
          const first = await expiry();
          // renewed past the first expiry: still A's, with no write from A in between
          await until(async () => (await expiry()) > first + 600, 'a renewal past the first expiry');
          expect(b.tryLease(taskId, workerB)).toBe(false);
          a.append(taskId, [output('still mine')], { status: 'running' });
        });

        it('tells the worker when a renewal finds its lease taken over', async () => {
          const {
            schema,
            stores: [a],
          } = two({ leaseMs: 600, renewMs: 100 });
          const { taskId } = a.createTask(created);
          const lost = new Promise<string>((resolve) => a.onLeaseLost?.(resolve));
          expect(a.tryLease(taskId, workerA)).toBe(true);
          // another machine takes it over (its epoch moves on)
          await sql(
            schema,
            `UPDATE leases SET epoch = epoch + 1, pid = 202, host = 'machine-b' WHERE task_id = $1`,
            [taskId],
          );
          expect(await lost).toBe(taskId);
          expect(() => a.append(taskId, [output('after the takeover')], { status: 'running' })).toThrow(
            LeaseLostError,
          );
        });

        it('shares provider windows: one any worker closed holds for all of them', async () => {
          const {
            stores: [a, b],
          } = two({});
          const now = new Date('2026-11-29T12:00:00Z');
          expect(b.closedProviders(now)).toEqual([]);
          a.closeProvider('claude', '2026-11-29T12:05:00Z');
          // B hears of it through LISTEN/NOTIFY, a moment after A's commit
          await until(() => b.closedProviders(now).length === 1, "B to see A's window");
          expect(b.closedProviders(now)).toEqual([{ provider: 'claude', resetAt: '2026-11-29T12:05:00Z' }]);
          b.closeProvider('claude', '2026-11-29T12:01:00Z');
          expect(a.closedProviders(now)).toEqual([{ provider: 'claude', resetAt: '2026-11-29T12:05:00Z' }]);
        });

        it('reads a long log in pages, whole and in order, interleaved with another task', () => {
          const {
            stores: [a, b],
          } = two({});
          const one = a.createTask(created).taskId;
          const other = b.createTask(created).taskId;
          for (let batch = 0; batch < 12; batch++) {
            a.append(
              one,
              Array.from({ length: 100 }, (_, i) => output(`${batch * 100 + i}`)),
              { status: 'running' },
            );
            b.append(other, [output('other')], { status: 'running' });
          }
          const texts = [...b.events(one)].flatMap((e) => (e.type === 'stage_output' ? [e.text] : []));
          expect(texts).toEqual(Array.from({ length: 1200 }, (_, i) => `${i}`));
          expect([...a.eventsOfTypes(['stage_output'])]).toHaveLength(1212);
        });

        it('carries on after the database dropped its connections (a restart): the next call connects again', async () => {
          const {
            schema,
            stores: [a],
          } = two({});
          const { taskId } = a.createTask(created);
          expect(await endSessions(`troupe:${schema}`)).toBeGreaterThan(0);
          a.append(taskId, [output('after the restart')], { status: 'running' });
          expect([...a.events(taskId)]).toHaveLength(2);
        });

        it('gives up on a statement the database does not answer in time, instead of hanging', async () => {
          const schema = scratchSchemaName();
          const store = openScratch({ schema, statementTimeoutMs: 300 });
          open.push(store);
          const { taskId } = store.createTask(created);
          // another session holds the lock every write waits for, and does not let go
          const holder = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
          await holder.connect();
          try {
            await holder.query('BEGIN');
            await holder.query('SELECT pg_advisory_xact_lock(7451, hashtext(current_schema()))');
            expect(() => store.append(taskId, [output('blocked')], { status: 'running' })).toThrow(
              StoreUnavailableError,
            );
          } finally {
            await holder.query('ROLLBACK');
            await holder.end();
          }
          store.append(taskId, [output('once the lock is free')], { status: 'running' });
          expect([...store.events(taskId)]).toHaveLength(2);
        });

        it('keeps its schema when the URL carries options of its own', async () => {
          const schema = scratchSchemaName();
          schemas.add(schema);
          const store = openPostgresStore(`${PG_URL}?options=-c%20application_name%3Dmine`, {
            schema,
            client: currentClient,
          });
          open.push(store);
          const { taskId } = store.createTask(created);
          // the task is in the schema's own table (not in public, as it would be had search_path been lost)
          expect(await sql(schema, `SELECT id FROM ${schema}.tasks`)).toEqual([{ id: taskId }]);
        });

        it('applies its migrations once: a second store on the schema finds nothing to do', async () => {
          const { schema } = two({});
          const rows = await sql<{ version: number }>(schema, 'SELECT version FROM schema_migrations');
          expect(rows.map((row) => row.version)).toEqual(MIGRATIONS.map((step) => step.version));
        });

        it("migration 3 keeps what an older store recorded: a task's current agent and last change move to its row", async () => {
          const schema = scratchSchemaName();
          schemas.add(schema);
          await sql('postgres', `CREATE SCHEMA ${schema}`);
          // the schema as the store of migrations 1 and 2 left it, with a task two stages in
          const [v1, v2] = MIGRATIONS;
          await sql(
            schema,
            `${v1!.sql}${v2!.sql}
        CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
        INSERT INTO schema_migrations (version, name) VALUES (1, 'one'), (2, 'two')`,
          );
          const started = (stage: number, agent: string) =>
            JSON.stringify({ type: 'stage_started', stage, activation: 'a1', agent, input: 'x', attempt: 1 });
          await sql(
            schema,
            `SELECT troupe_create_task('T-000001', 'p', 'in', 'task_created', $1, '2026-12-01T10:00:00.000Z')`,
            [JSON.stringify(created)],
          );
          await sql(
            schema,
            `SELECT troupe_append('T-000001', ARRAY['stage_started', 'stage_started'], ARRAY[$1, $2], '2026-12-01T10:05:00.000Z', 'running', NULL)`,
            [started(1, 'writer'), started(2, 'editor')],
          );
          const store = openPostgresStore(PG_URL, { schema, client: currentClient });
          open.push(store);
          expect(store.task('T-000001')).toMatchObject({
            currentAgent: 'editor',
            updated: '2026-12-01T10:05:00.000Z',
          });
          // and the writes keep them from here: a restart goes back to the agent before it
          const [editor] = [...store.events('T-000001')].filter((e) => e.type === 'stage_started').slice(1);
          store.restart(
            'T-000001',
            editor!.seq,
            { type: 'task_restarted', fromStage: 2 },
            { status: 'running' },
          );
          expect(store.task('T-000001')?.currentAgent).toBe('writer');
          expect(store.tasks()[0]).toMatchObject({ id: 'T-000001', currentAgent: 'writer' });
        });

        it('records the troupe version with each event it appends; one written without it (an older troupe) has none', async () => {
          const schema = scratchSchemaName();
          const store = openScratch({ schema });
          open.push(store);
          const { taskId } = store.createTask(created);
          const [appended] = store.append(taskId, [output('x')], { status: 'running' });
          expect(appended?.engine).toBe(packageVersion());
          // the writing function as an older troupe calls it: its session sets no troupe.engine
          await sql(
            schema,
            `SELECT troupe_append($1, ARRAY['stage_output'], ARRAY[$2], '2026-12-01T10:05:00.000Z', 'running', NULL)`,
            [taskId, JSON.stringify(output('old'))],
          );
          expect([...store.events(taskId)].map((event) => event.engine)).toEqual([
            packageVersion(),
            packageVersion(),
            undefined,
          ]);
        });

        it('refuses to open a schema with a migration newer than it knows, even one only read', async () => {
          const schema = scratchSchemaName();
          openScratch({ schema }).close();
          await sql(
            schema,
            `INSERT INTO schema_migrations (version, name) VALUES ($1, 'from a newer troupe')`,
            [LATEST_VERSION + 1],
          );
          const line = `the store's schema is at version ${LATEST_VERSION + 1}, newer than this troupe knows (${LATEST_VERSION}): upgrade troupe (this is ${packageVersion()}; `;
          for (const existing of [false, true]) {
            const error = (() => {
              try {
                openScratch({ schema, existing }).close();
              } catch (thrown) {
                return thrown as Error;
              }
            })();
            expect(error).toBeInstanceOf(StoreTooNewError);
            expect(error?.message).toContain(line);
            expect(error?.message).toContain(`(schema ${schema}))`);
          }
        });

        it('plans the task list once per connection, however many tasks the store holds', async () => {
          const schema = scratchSchemaName();
          openScratch({ schema }).close();
          // a store that grew: 20,000 tasks, and the statistics autovacuum would have gathered
          await sql(
            schema,
            `INSERT INTO tasks (id, status, pipeline, input, created_at, updated_at)
         SELECT 'T-' || upper(lpad(to_hex(i), 6, '0')), 'completed', 'p', 'in', at, at
         FROM generate_series(1, 20000) i,
           to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS".000Z"') at;
         ANALYZE tasks`,
          );
          const db = connectPostgres(PG_URL, { schema, client: currentClient });
          try {
            const { sql: page, params } = taskListSql({ limit: 20 });
            for (let i = 0; i < 12; i++)
              expect(db.query<{ id: string }>(page, params)[0]?.id).toBe('T-004E20');
            // past its first calls (PostgreSQL's custom plans), the statement's plan is the one it keeps
            const [plans] = db.query<{ generic_plans: string; custom_plans: string }>(
              'SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement = $1',
              [page],
            );
            expect(Number(plans?.generic_plans)).toBeGreaterThan(0);
          } finally {
            db.close();
          }
        });

        it("tells a reader of another store each append, by NOTIFY from the append's transaction, with its seq", async () => {
          const {
            schema,
            stores: [a, b],
          } = two({});
          const told: (number | null)[] = [];
          const unsubscribe = b.onAppended!((seq) => told.push(seq));
          const { taskId, seq: first } = a.createTask(created);
          const [, last] = a.append(taskId, [output('one'), output('two')], { status: 'running' });
          await until(() => told.includes(last!.seq), 'the append to be told');
          // the creation is told too; a notification with no seq would only mean "read again"
          expect(told.filter((seq) => seq !== null)).toEqual([first, last!.seq]);

          // a transaction rolled back tells nothing (its seq is used up, and never told); a commit is, as before
          await sql(
            schema,
            `BEGIN; SELECT troupe_append('${taskId}', ARRAY['stage_output'], ARRAY['{}'], 'x', 'running', NULL, NULL, NULL); ROLLBACK`,
          );
          unsubscribe();
          const after: (number | null)[] = [];
          b.onAppended!((seq) => after.push(seq));
          const [third] = a.append(taskId, [output('three')], { status: 'running' });
          expect(third!.seq).toBe(last!.seq + 2);
          await until(() => after.includes(third!.seq), 'the next append to be told');
          expect(told.filter((seq) => seq !== null)).toEqual([first, last!.seq]);
          expect(after.filter((seq) => seq !== null)).toEqual([third!.seq]);
        });

        it('notifies on a schema whose name is as long as PostgreSQL allows (its channels are hashed)', async () => {
          const schema = `${scratchSchemaName()}_`.padEnd(63, 'x');
          const [a, b] = [openScratch({ schema }), openScratch({ schema })];
          open.push(a, b);
          const told: (number | null)[] = [];
          b.onAppended!((seq) => told.push(seq));
          const { seq } = a.createTask(created);
          await until(() => told.includes(seq), 'the append to be told');
          a.closeProvider('claude', '2999-01-01T00:00:00.000Z');
          expect(b.closedProviders(new Date())).toEqual([
            { provider: 'claude', resetAt: '2999-01-01T00:00:00.000Z' },
          ]);
        });

        it('listens again once its connection was dropped, and tells that something may have been missed', async () => {
          const {
            schema,
            stores: [a, b],
          } = two({}, { renewMs: 50 });
          const told: (number | null)[] = [];
          b.onAppended!((seq) => told.push(seq));
          const { taskId } = a.createTask(created);
          const cut = told.length;
          await endSessions(`troupe:${schema}`);
          a.append(taskId, [output('perhaps while nobody listened')], { status: 'running' });
          await until(() => told.slice(cut).includes(null), 'the listener to connect again');
          const [next] = a.append(taskId, [output('once listening again')], { status: 'running' });
          await until(() => told.includes(next!.seq), 'the next append to be told');
        });
      });
    });
}

describe.skipIf(unreachable)('the PostgreSQL store: the merge lock shared by workers', () => {
  it('lets one store at a time hold a key; the other waits, then takes it once it is let go', async () => {
    const { advisoryMergeLock } = await import('../advisory-merge-lock.js');
    const local = { withMergeLock: <T>(_key: string, fn: () => Promise<T>) => fn() };
    const a = openScratch();
    const b = openScratch();
    try {
      expect(a.tryAdvisoryLock?.('origin main')).toBe(true);
      expect(b.tryAdvisoryLock?.('origin main')).toBe(false);
      expect(b.tryAdvisoryLock?.('origin other')).toBe(true);
      b.advisoryUnlock?.('origin other');
      const order: string[] = [];
      const waiting = advisoryMergeLock(b, local, { pollMs: 10 }).withMergeLock('origin main', async () => {
        order.push('b merges');
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      order.push('a lets go');
      a.advisoryUnlock?.('origin main');
      await waiting;
      expect(order).toEqual(['a lets go', 'b merges']);
      // b let go after its merge
      expect(a.tryAdvisoryLock?.('origin main')).toBe(true);
      a.advisoryUnlock?.('origin main');
    } finally {
      a.close();
      b.close();
    }
  });
});
