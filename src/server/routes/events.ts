import { Hono } from 'hono';
import { packageVersion } from '../../package-root.js';
import { serverApi } from '../api/events.js';
import type { ServerContext } from '../context.js';
import { handle } from '../handle.js';
import { eventStream } from '../sse.js';

/** The event log of every task, live; and the server's own state. */
export function eventRoutes(ctx: ServerContext): Hono {
  const app = new Hono();
  handle(app, serverApi.events, ({ headers, query }, c) =>
    eventStream(ctx.hub, ctx.store, {
      taskId: null,
      // without a place to resume from, a new client gets what happens from now on
      after: headers['last-event-id'] ?? query.after ?? ctx.hub.cursor,
      signal: c.req.raw.signal,
    }),
  );
  handle(app, serverApi.health, ({ reply }) =>
    reply(200, { ok: true, version: packageVersion(), last_seq: ctx.hub.cursor, running: ctx.runner.active }),
  );
  return app;
}
