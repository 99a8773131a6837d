import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, testDatabase } from '../../../test/support/queue-db.js';
import { openPgBossQueue, type PgBossQueue } from './pg-boss-queue.js';
import type { WakeJob } from './work-queue.js';

/** The pg-boss queue against the local PostgreSQL, in a database of its own. */
describe('pg-boss work queue', () => {
  let db: TestDatabase;
  let queue: PgBossQueue;
  beforeAll(async () => {
    db = await testDatabase();
    queue = await openPgBossQueue({ url: db.url, retryLimit: 1, retryDelaySeconds: 1, pollMs: 100 });
  });
  afterAll(async () => {
    await queue.close();
    await db[Symbol.asyncDispose]();
  });

  const waiting = async (lane: string) =>
    (
      await db.query<{ data: { taskId: string } }>(
        "SELECT data FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry')",
        [`troupe-${lane}`],
      )
    ).map((r) => r.data.taskId);

  it('a duplicate of a wake-up not yet taken collapses into it; other lanes and tasks do not', async () => {
    await queue.enqueue({ taskId: 'T-000001', lane: 'claude' });
    await queue.enqueue({ taskId: 'T-000001', lane: 'claude' });
    await queue.enqueue({ taskId: 'T-000001', lane: 'codex' });
    await queue.enqueue({ taskId: 'T-000002', lane: 'claude' });
    expect((await waiting('claude')).sort()).toEqual(['T-000001', 'T-000002']);
    expect(await waiting('codex')).toEqual(['T-000001']);
  });

  it('a worker takes only its lanes, and a wake-up for later not before its time', async () => {
    const later = new Date(Date.now() + 60_000);
    await queue.enqueue({ taskId: 'T-000003', lane: 'gemini' }, { startAfter: later });
    const seen: WakeJob[] = [];
    queue.work({ lanes: ['claude', 'gemini'], concurrency: 2 }, async (job) => {
      seen.push(job);
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await queue.stop();
    expect(seen.map((j) => `${j.lane}:${j.taskId}`).sort()).toEqual(['claude:T-000001', 'claude:T-000002']);
    expect(await waiting('codex')).toEqual(['T-000001']);
    expect(await waiting('gemini')).toEqual(['T-000003']);
  });

  it('a slot that frees is filled at once, not a polling period later, while another loop idles', async () => {
    // a period no test waits for: a slot left to the polling would never be filled here
    const slow = await openPgBossQueue({ url: db.url, pollMs: 600_000 });
    try {
      for (const id of ['T-000011', 'T-000012', 'T-000013'])
        await slow.enqueue({ taskId: id, lane: 'mailbox' });
      const ended: string[] = [];
      slow.work({ lanes: ['mailbox'], concurrency: 1 }, async (job) => {
        await new Promise((resolve) => setTimeout(resolve, 300));
        ended.push(job.taskId);
      });
      // a second loop (as a worker's check lane) that goes idle while the first one's job runs
      await new Promise((resolve) => setTimeout(resolve, 100));
      slow.work({ lanes: ['command'], concurrency: 1 }, async () => {});
      const end = Date.now() + 25_000;
      while (ended.length < 3 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(ended.sort()).toEqual(['T-000011', 'T-000012', 'T-000013']);
    } finally {
      await slow.close();
    }
  });

  it('a handler that keeps failing sends the task to the dead-letter queue; revive takes it out', async () => {
    await queue.enqueue({ taskId: 'T-000004', lane: 'openai' });
    let calls = 0;
    queue.work({ lanes: ['openai'], concurrency: 1 }, async () => {
      calls++;
      throw new Error('the log cannot be replayed');
    });
    const end = Date.now() + 20_000;
    while ((await queue.deadLetters()).length === 0 && Date.now() < end)
      await new Promise((resolve) => setTimeout(resolve, 200));
    await queue.stop();
    expect(calls).toBe(2); // the first try and one retry
    expect(await queue.deadLetters()).toMatchObject([
      { taskId: 'T-000004', error: 'the log cannot be replayed' },
    ]);
    expect(await queue.revive('T-000004')).toBe(true);
    expect(await queue.deadLetters()).toEqual([]);
    expect(await queue.revive('T-000004')).toBe(false);
  });
});

describe('pg-boss work queue: wake-ups told by NOTIFY', () => {
  it('an idle worker takes a wake-up due now at once, not at its next poll', async () => {
    await using db = await testDatabase();
    // a poll so rare that only the notification can bring the job in time
    const worker = await openPgBossQueue({ url: db.url, pollMs: 120_000 });
    const sender = await openPgBossQueue({ url: db.url, pollMs: 120_000 });
    try {
      const seen: string[] = [];
      worker.work({ lanes: ['claude'], concurrency: 1 }, async (job) => {
        seen.push(job.taskId);
      });
      // the loop has polled once, found nothing, and idles
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await sender.enqueue({ taskId: 'T-000010', lane: 'claude' });
      await sender.enqueue({ taskId: 'T-000011', lane: 'codex' }); // not its lane: not told
      const end = Date.now() + 20_000;
      while (seen.length === 0 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(seen).toEqual(['T-000010']);
    } finally {
      await Promise.all([worker.close(), sender.close()]);
    }
  });
});
