import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { namespaced } from '../src/store/queue/queue-namespace.js';
import { dropSchemas, PG_URL, postgresUnreachable, scratchSchemaName } from './support/postgres.js';
import { startWorker } from './support/queue-db.js';
import { serve } from './support/serve.js';
import { project, troupe, waitFor } from './support/troupe.js';

/**
 * A poison task (review 2026-12-03-distributed, 2g and D4): its stage runs, but the store refuses
 * to record the stage's `stage_completed` (a trigger on the events table), so every run fails.
 * Its failed runs count against the task across jobs and check-lane wake-ups: past the queue's
 * retry limit it is parked, shown as such, and nothing runs it again until a person resumes it.
 * One real `troupe worker` on a PostgreSQL store, the queue in the store's database.
 */

const unreachable = await postgresUnreachable();
const schemas = new Set<string>();
afterAll(() => dropSchemas(schemas));

/** `TROUPE_QUEUE_RETRY_LIMIT`: 1 retry, so 2 failed runs park the task (a third may be in flight). */
const RETRY_LIMIT = 1;
const MOST_RUNS = RETRY_LIMIT + 1 + 1;
/** Long enough for several check periods (the worker checks every TROUPE_LEASE_SECONDS=1 s). */
const QUIET_WINDOW_MS = 8000;

function storeUrl(): { url: string; schema: string } {
  const schema = scratchSchemaName();
  schemas.add(schema);
  schemas.add(namespaced('pgboss', schema));
  const url = new URL(PG_URL);
  url.searchParams.set('schema', schema);
  return { url: url.toString(), schema };
}

async function sql(text: string, values: unknown[] = []): Promise<Array<Record<string, unknown>>> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return (await client.query(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Refuses the task's events of `types` (as a store that cannot take them would). */
async function refuse(schema: string, taskId: string, types: string[]): Promise<void> {
  const list = types.map((t) => `'${t}'`).join(', ');
  await sql(`
    CREATE FUNCTION "${schema}".poison() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.task_id = '${taskId}' AND NEW.type IN (${list}) THEN
        RAISE EXCEPTION 'poisoned: % refused', NEW.type;
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER poison BEFORE INSERT ON "${schema}".events FOR EACH ROW EXECUTE FUNCTION "${schema}".poison();`);
}

async function cure(schema: string): Promise<void> {
  await sql(`DROP TRIGGER poison ON "${schema}".events`);
}

/** The task's event types, as stored. */
async function logged(schema: string, taskId: string): Promise<string[]> {
  const rows = await sql(`SELECT type FROM "${schema}".events WHERE task_id = $1 ORDER BY seq`, [taskId]);
  return rows.map((row) => row.type as string);
}

function runs(file: string): number {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
}

interface StatusJson {
  status: string;
  parked: { reason: string; failures: number; at: string } | null;
}

async function setUp(refused: string[]) {
  const { url, schema } = storeUrl();
  const dir = project();
  const ranFile = join(dir, 'runs.log');
  const env = {
    TROUPE_STORE: url,
    TROUPE_QUEUE_RETRY_LIMIT: String(RETRY_LIMIT),
    TROUPE_QUEUE_RETRY_DELAY: '1',
  };
  const pipeline = `agents:\n  - id: step\n    runtime: command\n    command: [sh, -c, ${JSON.stringify(`echo ran >> '${ranFile}'`)}]\n`;
  const files = project({ 'p.yaml': pipeline });
  const run = await troupe(dir, ['run', 'poison', '--file', join(files, 'p.yaml'), '--detach'], env);
  expect(run.code, run.stderr).toBe(0);
  const id = run.stdout.trim();
  await refuse(schema, id, refused);
  const worker = await startWorker(dir, url, [], env);
  const status = async () => {
    const shown = await troupe(dir, ['status', id, '--json'], env);
    expect(shown.code, shown.stderr).toBe(0);
    return JSON.parse(shown.stdout) as StatusJson;
  };
  return { dir, id, env, schema, ranFile, worker, status };
}

describe.skipIf(unreachable)(`a poison task${unreachable ? `: ${unreachable}` : ''}`, () => {
  it('runs at most limit+1 times, is parked (log, status, list), stays stopped; resume runs it to the end', async () => {
    const { dir, id, env, schema, ranFile, worker, status } = await setUp(['stage_completed']);
    try {
      // parked, or running past its limit: whichever comes first
      await waitFor(
        async () => (runs(ranFile) > MOST_RUNS || (await status()).status === 'parked' ? true : undefined),
        60_000,
      );
      expect(runs(ranFile)).toBeLessThanOrEqual(MOST_RUNS);
      const parked = await status();
      expect(parked.status).toBe('parked');
      expect(parked.parked?.reason).toMatch(/poisoned: stage_completed refused/);
      // the run that reached the limit parked it; one more already in flight may fail after it
      expect(parked.parked?.failures).toBeGreaterThanOrEqual(RETRY_LIMIT + 1);
      expect((await logged(schema, id)).filter((t) => t === 'task_parked')).toHaveLength(1);

      // stopped for good: several check periods later, not one run more
      const ran = runs(ranFile);
      await new Promise((resolve) => setTimeout(resolve, QUIET_WINDOW_MS));
      expect(runs(ranFile)).toBe(ran);
      expect((await status()).status).toBe('parked');

      const text = await troupe(dir, ['status', id], env);
      expect(text.stdout).toContain(`${id}  parked`);
      expect(text.stdout).toMatch(
        new RegExp(
          `parked: .*poisoned: stage_completed refused.*\\(\`troupe resume ${id}\` to run it again\\)`,
        ),
      );
      expect(text.stdout).not.toMatch(/dead-lettered|running/);
      expect((await troupe(dir, ['list'], env)).stdout).toMatch(new RegExp(`${id}  parked`));
      for (const args of [['list'], ['list', '--dead'], ['list', '--status', 'parked']]) {
        const listed = await troupe(dir, [...args, '--json'], env);
        const rows = JSON.parse(listed.stdout) as Array<{ id: string; status: string }>;
        expect(rows.find((r) => r.id === id)?.status, args.join(' ')).toBe('parked');
      }

      // the HTTP API: the task's status and reason, and the list of parked tasks
      const served = await serve(dir, [], env);
      try {
        const detail = (await (await fetch(`${served.url}api/tasks/${id}`)).json()) as StatusJson;
        expect(detail.status).toBe('parked');
        expect(detail.parked?.reason).toMatch(/poisoned/);
        const listed = (await (await fetch(`${served.url}api/parked`)).json()) as {
          parked: Array<{ id: string; status: string; failures: number }>;
        };
        expect(listed.parked).toEqual([expect.objectContaining({ id, status: 'parked' })]);
        // every failure counted is a run that happened
        expect(listed.parked[0]!.failures).toBeGreaterThanOrEqual(RETRY_LIMIT + 1);
        expect(listed.parked[0]!.failures).toBeLessThanOrEqual(runs(ranFile));
      } finally {
        await served.stop();
      }

      await cure(schema);
      const resumed = await troupe(dir, ['resume', id], env);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toMatch(/parked no more, queued again/);
      await waitFor(async () => ((await status()).status === 'completed' ? true : undefined), 60_000);
      expect(runs(ranFile)).toBe(ran + 1);
      // a person's resume is in the log, after the parked mark
      const types = await logged(schema, id);
      expect(types.indexOf('task_resumed', types.indexOf('task_parked'))).toBeGreaterThan(0);
      const after = await troupe(dir, ['list', '--dead', '--json'], env);
      expect(JSON.parse(after.stdout)).toEqual([]);
    } finally {
      expect(await worker.stop()).toBe(0);
    }
  }, 150_000);

  it('a log that refuses even `task_parked` still stops: the queue keeps the mark; resume --parked clears it', async () => {
    const { dir, id, env, schema, ranFile, worker, status } = await setUp(['stage_completed', 'task_parked']);
    try {
      await waitFor(
        async () => (runs(ranFile) > MOST_RUNS || (await status()).status === 'parked' ? true : undefined),
        60_000,
      );
      expect(runs(ranFile)).toBeLessThanOrEqual(MOST_RUNS);
      const ran = runs(ranFile);
      await new Promise((resolve) => setTimeout(resolve, QUIET_WINDOW_MS));
      expect(runs(ranFile)).toBe(ran);
      // one state: parked, though the log could not say so
      const shown = await status();
      expect(shown.status).toBe('parked');
      expect(shown.parked?.reason).toMatch(/poisoned: stage_completed refused/);
      expect((await logged(schema, id)).includes('task_parked')).toBe(false);
      expect(worker.stderr()).toMatch(/parked, but its log refused to say so/);

      await cure(schema);
      const resumed = await troupe(dir, ['resume', '--parked'], env);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toMatch(new RegExp(`${id}  queued again \\(was parked: .*poisoned`));
      await waitFor(async () => ((await status()).status === 'completed' ? true : undefined), 60_000);
      expect(runs(ranFile)).toBe(ran + 1);
    } finally {
      expect(await worker.stop()).toBe(0);
    }
  }, 150_000);
});
