import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabase } from '../../../test/support/queue-db.js';
import { withQueueDb } from './queue-db.js';
import { openSharedLimits, type SharedLimits } from './shared-limits.js';
import { WorkerRegistry } from './worker-registry.js';

/** `limits:` across processes on the local PostgreSQL, in a database of its own. */
describe('shared limits', () => {
  let db: TestDatabase;
  const opened: SharedLimits[] = [];
  beforeAll(async () => {
    db = await testDatabase();
  });
  afterAll(async () => {
    for (const limits of opened) await limits.close();
    await db[Symbol.asyncDispose]();
  });

  it('workers that start together all register: none skips a column another is still adding', async () => {
    const url = `${db.url}?schema=racing`;
    const worker = (id: string) => ({
      id,
      host: 'h',
      pid: 1,
      runtimes: ['claude'],
      labels: [],
      tasks: [],
      started: new Date().toISOString(),
      lastSeen: new Date().toISOString(),
      version: '1',
    });
    const ids = Array.from({ length: 6 }, (_, i) => `w${i}`);
    await Promise.all(
      ids.map((id) => withQueueDb(url, (q, at) => new WorkerRegistry(q, at.schema).seen(worker(id)))),
    );
    const listed = await withQueueDb(url, (q, at) => new WorkerRegistry(q, at.schema).list());
    expect(listed.map((w) => w.id).sort()).toEqual(ids);
  });

  it('a call of a worker not registered yet counts against the cap', async () => {
    const url = `${db.url}?schema=caps`;
    const limit = { claude: { concurrency: 1, requests_per_minute: null } };
    // the workers' table exists (another worker registered) but neither of these is in it
    await withQueueDb(url, (q, at) => new WorkerRegistry(q, at.schema).expire());
    const first = await openSharedLimits(url, limit, 'unregistered-a');
    const second = await openSharedLimits(url, limit, 'unregistered-b');
    opened.push(first, second);
    const release = await first.acquire('claude', 'claude');
    const stop = new AbortController();
    const waiting = Promise.resolve(second.acquire('claude', 'claude', stop.signal));
    const raced = await Promise.race([waiting.then(() => 'took'), sleep(1000).then(() => 'waited')]);
    expect(raced).toBe('waited');
    release();
    await expect(waiting).resolves.toBeTypeOf('function');
  });
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
