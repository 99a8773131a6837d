import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabase } from '../../../test/support/queue-db.js';
import { openPgBossQueue, type PgBossQueue } from './pg-boss-queue.js';
import { readParkedTasks } from './task-failures.js';

/** Failed wake-ups counted per task on the local PostgreSQL, in a database of its own. */
describe('task failures', () => {
  let db: TestDatabase;
  let queues: PgBossQueue[];
  beforeAll(async () => {
    db = await testDatabase();
    const url = `${db.url}?schema=proj_a`;
    // two processes (two workers) on one queue, with a retry limit of 2
    queues = [await openPgBossQueue({ url, retryLimit: 2 }), await openPgBossQueue({ url, retryLimit: 2 })];
  });
  afterAll(async () => {
    for (const queue of queues) await queue.close();
    await db[Symbol.asyncDispose]();
  });

  it('counts across processes; parks at the limit+1th failure and keeps the first time; resume clears it', async () => {
    const [a, b] = queues as [PgBossQueue, PgBossQueue];
    expect(await a.countFailure('T-000001', 'one')).toEqual({ failures: 1, parked: null });
    expect(await b.countFailure('T-000001', 'two')).toEqual({ failures: 2, parked: null });
    expect(await a.parkedTask('T-000001')).toBeNull();
    const third = await b.countFailure('T-000001', 'three');
    expect(third.parked).toMatchObject({ taskId: 'T-000001', reason: 'three', failures: 3 });
    const fourth = await a.countFailure('T-000001', 'four');
    expect(fourth.parked?.at).toBe(third.parked?.at);
    expect(await a.countFailure('T-000002', 'other task')).toEqual({ failures: 1, parked: null });
    expect((await b.parked()).map((p) => p.taskId)).toEqual(['T-000001']);
    // read without pg-boss, in the project's namespace only
    expect((await readParkedTasks(`${db.url}?schema=proj_a`)).map((p) => p.taskId)).toEqual(['T-000001']);
    expect(await readParkedTasks(`${db.url}?schema=proj_b`)).toEqual([]);

    expect(await a.revive('T-000001')).toBe(true);
    expect(await b.parkedTask('T-000001')).toBeNull();
    expect(await b.countFailure('T-000001', 'again')).toEqual({ failures: 1, parked: null });
    expect(await a.revive('T-000002')).toBe(false);
  });
});
