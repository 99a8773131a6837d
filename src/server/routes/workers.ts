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
      workers: found.workers.map(({ lastSeen, ...worker }) => ({ ...worker, last_seen: lastSeen })),
    });
  });
  return app;
}
