import { Hono } from 'hono';
import type { ParkedTask } from '../../store/queue/task-failures.js';
import { queueApi } from '../api/queue.js';
import type { ServerContext } from '../context.js';
import { handle } from '../handle.js';

/** Parked tasks and dead letters, and resuming every parked task; nothing when the project has no queue. */
export function queueRoutes(ctx: ServerContext): Hono {
  const app = new Hono();
  handle(app, queueApi.parked, async ({ reply }) => {
    const found = await ctx.givenUp();
    if (!found) return reply(200, { queue: null, parked: [], dead_letters: [] });
    return reply(200, {
      queue: found.queue,
      parked: found.parked.map(({ taskId, ...mark }) => ({
        id: taskId,
        status: ctx.store.task(taskId)?.status ?? 'parked',
        ...mark,
      })),
      dead_letters: found.deadLetters.map(({ taskId, ...letter }) => ({ id: taskId, ...letter })),
    });
  });
  handle(app, queueApi.resumeParked, async ({ reply }) => {
    const resumed = (await ctx.resumeGivenUp('all')) ?? [];
    return reply(200, {
      resumed: resumed.map((r) => ({ id: r.id, parked: r.parked && markOf(r.parked), queued: r.queued })),
    });
  });
  return app;
}

function markOf({ reason, failures, at }: ParkedTask) {
  return { reason, failures, at };
}
