import { Hono } from 'hono';
import { packageVersion } from '../../package-root.js';
import type { ServerContext } from '../context.js';
import { eventStream, startSeq } from '../sse.js';

/** The event log of every task, live; and the server's own state. */
export function eventRoutes(ctx: ServerContext): Hono {
  const app = new Hono();
  app.get('/api/events', (c) =>
    eventStream(ctx.hub, ctx.store, {
      taskId: null,
      // without a place to resume from, a new client gets what happens from now on
      after: startSeq(c.req.header('last-event-id'), c.req.query('after'), ctx.hub.cursor),
      signal: c.req.raw.signal,
    }),
  );
  app.get('/api/health', (c) =>
    c.json({ ok: true, version: packageVersion(), last_seq: ctx.hub.cursor, running: ctx.runner.active }),
  );
  return app;
}
