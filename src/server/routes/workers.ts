import { Hono } from 'hono';
import { workerApi } from '../api/workers.js';
import type { ServerContext } from '../context.js';
import { handle } from '../handle.js';

/** The workers on the queue; none (queue: null) when the project has no queue. */
export function workerRoutes(ctx: ServerContext): Hono {
  const app = new Hono();
  handle(app, workerApi.workers, async ({ reply }) => {
    const found = await ctx.workers();
    if (!found) return reply(200, { queue: null, workers: [] });
    return reply(200, {
      queue: found.queue,
      workers: found.workers.map(({ lastSeen, leaseLosses, wakeFailures, ...worker }) => ({
        ...worker,
        last_seen: lastSeen,
        lease_losses: leaseLosses,
        wake_failures: wakeFailures,
      })),
    });
  });
  handle(app, workerApi.queue, async ({ reply }) => {
    const found = await ctx.queue();
    if (!found) return reply(200, { queue: null, lanes: [], active: [], dead_letters: 0 });
    return reply(200, {
      queue: found.queue,
      lanes: found.overview.lanes.map(({ oldestWaitSeconds, ...lane }) => ({
        ...lane,
        oldest_wait_seconds: oldestWaitSeconds,
      })),
      active: found.overview.active.map(({ taskId, ...job }) => ({ ...job, task_id: taskId })),
      dead_letters: found.overview.deadLetters,
    });
  });
  handle(app, workerApi.metrics, async (_input, c) => {
    const metrics = await ctx.metrics();
    return c.body(await metrics.render(), 200, { 'content-type': metrics.contentType });
  });
  return app;
}
