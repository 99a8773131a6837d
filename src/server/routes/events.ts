import { Hono } from 'hono';
import { packageVersion } from '../../package-root.js';
import { liveApi } from '../api/events.js';
import { serverApi } from '../api/server.js';
import type { ServerContext } from '../context.js';
import { handle } from '../handle.js';
import { eventStream } from '../sse.js';
import { mustExist } from './tasks.js';

/** The event log, live: of every task, and of one; and the server's own state. */
export function eventRoutes(ctx: ServerContext): Hono {
  const app = new Hono();
  handle(app, liveApi.all, ({ headers, query }, c) =>
    eventStream(ctx.hub, ctx.store, {
      taskId: null,
      // without a place to resume from, a new client gets what happens from now on
      after: headers['last-event-id'] ?? query.after ?? ctx.hub.cursor,
      signal: c.req.raw.signal,
    }),
  );
  handle(app, liveApi.task, ({ params, headers, query }, c) =>
    eventStream(ctx.hub, ctx.store, {
      taskId: mustExist(ctx, params.id),
      after: headers['last-event-id'] ?? query.after ?? 0,
      signal: c.req.raw.signal,
    }),
  );
  handle(app, serverApi.health, ({ reply }) =>
    reply(200, { ok: true, version: packageVersion(), last_seq: ctx.hub.cursor, running: ctx.runner.active }),
  );
  return app;
}
