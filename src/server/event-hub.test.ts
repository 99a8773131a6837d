import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { dropSchemas, PG_URL, postgresUnreachable, scratchSchemaName } from '../../test/support/postgres.js';
import type { EventStore } from '../core/event-store.js';
import { TASK_CREATED } from '../engine/test-pipelines.js';
import { openPostgresStore } from '../store/postgres/postgres-store.js';
import { EventHub } from './event-hub.js';

const unreachable = await postgresUnreachable();
const schemas = new Set<string>();
const open: { close(): void }[] = [];
afterEach(() => {
  for (const closable of open.splice(0).reverse()) closable.close();
});
afterAll(() => dropSchemas(schemas));

function twoStores(): [EventStore, EventStore] {
  const schema = scratchSchemaName();
  schemas.add(schema);
  const stores = [openPostgresStore(PG_URL, { schema }), openPostgresStore(PG_URL, { schema })] as const;
  open.push(...stores);
  return [...stores];
}

const created = TASK_CREATED;

describe.skipIf(unreachable)('EventHub on PostgreSQL', () => {
  it("is woken by another process's append through LISTEN/NOTIFY, not by its poll", async () => {
    const [writer, reader] = twoStores();
    const before = writer.createTask(created);
    // a poll that never comes within the test: only the notification can wake the hub
    const hub = new EventHub(reader, { pollMs: 3_600_000 }).start();
    open.push(hub);
    expect(hub.cursor).toBe(before.seq);

    const woken = hub.next(20_000);
    const { taskId } = writer.createTask(created);
    const appended = writer.append(taskId, [{ type: 'stage_output', stage: 1, text: 'hi' }], {
      status: 'running',
    });
    expect(await woken.promise).toBe(true);
    // a wake may come after the first of the two writes only: wait for the hub to read the second
    while (hub.cursor < appended[0]!.seq) expect(await hub.next(20_000).promise).toBe(true);
    const read = hub.read(before.seq, null);
    expect(read.events.map((e) => [e.taskId, e.type])).toEqual([
      [taskId, 'task_created'],
      [taskId, 'stage_output'],
    ]);
    expect(read.cursor).toBe(appended[0]!.seq);
  });
});
