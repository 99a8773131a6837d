import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchemas, PG_URL, postgresUnreachable, scratchSchemaName } from './support/postgres.js';
import { startWorker, testDatabase } from './support/queue-db.js';
import { readSse, serve } from './support/serve.js';
import { project, type TaskJson, troupe, waitFor, writerEditorPipeline } from './support/troupe.js';

const unreachable = await postgresUnreachable();
const schemas = new Set<string>();
afterAll(() => dropSchemas(schemas));

const script = `agents:
  writer: [{ reply: "first draft", delay_ms: 300 }]
  editor: [{ reply: "edited draft", delay_ms: 300 }]
`;

async function sql<T extends pg.QueryResultRow>(
  schema: string,
  text: string,
  params: unknown[],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

describe.skipIf(unreachable)(
  `troupe serve on PostgreSQL, live${unreachable ? `: ${unreachable}` : ''}`,
  () => {
    it("streams a task another process runs, pushed by the store's notifications; Last-Event-ID replays exactly what was missed", async () => {
      const schema = scratchSchemaName();
      schemas.add(schema);
      const url = new URL(PG_URL);
      url.searchParams.set('schema', schema);
      const store = url.toString();
      const dir = project({ 'pipeline.yaml': writerEditorPipeline, 'script.yaml': script });

      const served = await serve(dir, ['--store', store]);
      try {
        const stream = `${served.url}api/events`;
        // a browser watching from before the task exists (the schema is new: from seq 0); it drops
        // once the first stage has started
        const first = readSse(`${stream}?after=0`, { until: (frame) => frame.event === 'stage_started' });
        const run = await troupe(dir, [
          '--store',
          store,
          'run',
          'a haiku',
          '--file',
          'pipeline.yaml',
          '--script',
          'script.yaml',
          '--json',
        ]);
        expect(run.code, run.stderr).toBe(0);
        const task = JSON.parse(run.stdout) as TaskJson;
        expect(task.status).toBe('completed');

        // the server never polls PostgreSQL: all it got, it was told
        const before = (await first).frames.filter((frame) => frame.id !== null);
        expect(before.map((frame) => frame.event)).toEqual(['task_created', 'stage_started']);
        // back after the task ended: exactly the events it missed, up to the end
        const rest = await readSse(stream, {
          lastEventId: before.at(-1)!.id!,
          until: (frame) => frame.event === 'task_completed',
        });
        const after = rest.frames.filter((frame) => frame.id !== null);
        const log = (
          await sql<{ seq: string; type: string }>(
            schema,
            'SELECT seq, type FROM events WHERE task_id = $1 ORDER BY seq',
            [task.id],
          )
        ).map((row) => ({ seq: Number(row.seq), type: row.type }));
        expect([...before, ...after].map((frame) => Number(frame.id))).toEqual(log.map((e) => e.seq));
        expect([...before, ...after].map((frame) => frame.event)).toEqual(log.map((e) => e.type));
        expect(after.every((frame) => (frame.data as { taskId: string }).taskId === task.id)).toBe(true);
        // what it was told by: a session of the server's that LISTENs to the schema's appends
        const listening = await sql(
          schema,
          'SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND query = $2',
          [`troupe:${schema}`, `LISTEN "troupe_events:${schema}"`],
        );
        expect(listening).toHaveLength(1);
      } finally {
        await served.stop();
      }
    });

    it('lists the workers on the queue over HTTP, as `troupe workers` does: runtimes, labels, tasks, last seen', async () => {
      await using db = await testDatabase();
      const dir = project({
        '.troupe/config.yaml': `queue: ${db.url}\n`,
        'pipeline.yaml': writerEditorPipeline,
        // long enough for the worker to report the task it runs (every 5 s)
        'slow.yaml': 'agents:\n  writer: [{ reply: "draft", delay_ms: 60000 }]\n',
      });
      const worker = await startWorker(dir, db.url, [
        '--runtimes',
        'claude,codex',
        '--labels',
        'gpu',
        '--grace',
        '1',
      ]);
      const served = await serve(dir);
      try {
        const answer = (await (await fetch(`${served.url}api/workers`)).json()) as {
          queue: string;
          workers: Array<Record<string, unknown>>;
        };
        expect(answer.queue).toBe(db.url);
        expect(answer.workers).toEqual([
          expect.objectContaining({
            pid: worker.pid,
            runtimes: ['claude', 'codex'],
            labels: ['gpu'],
            tasks: [],
            gone: false,
            last_seen: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          }),
        ]);
        const cli = await troupe(dir, ['workers', '--json']);
        expect(cli.code, cli.stderr).toBe(0);
        const { last_seen: _, lease_losses, wake_failures, ...listed } = answer.workers[0]!;
        const {
          lastSeen: __,
          leaseLosses,
          wakeFailures,
          ...fromCli
        } = (JSON.parse(cli.stdout) as Array<Record<string, unknown>>)[0]!;
        expect(listed).toEqual(fromCli);
        expect([lease_losses, wake_failures]).toEqual([leaseLosses, wakeFailures]);
        expect(listed).toMatchObject({ stages: 0, takeovers: 0 });

        // what it is doing: the task it took from the queue
        const run = await troupe(dir, [
          'run',
          'a haiku',
          '--file',
          'pipeline.yaml',
          '--script',
          'slow.yaml',
          '--detach',
        ]);
        expect(run.code, run.stderr).toBe(0);
        const taskId = run.stdout.trim();
        const busy = await waitFor(async () => {
          const { workers } = (await (await fetch(`${served.url}api/workers`)).json()) as {
            workers: Array<{ tasks: string[] }>;
          };
          return workers[0]?.tasks.length ? workers[0].tasks : undefined;
        }, 20_000);
        expect(busy).toEqual([taskId]);
      } finally {
        await served.stop();
        await worker.stop();
      }
    });
  },
);
