import { Hono } from 'hono';
import { pieceDiffs } from '../../app/piece-diffs.js';
import { taskOwner } from '../../app/task-view.js';
import { mayWaitForWorker, noWorkerReason, workersIfWaiting } from '../../app/worker-wait.js';
import { TaskBusyError } from '../../core/errors.js';
import { AWAITING_PERSON_STATUSES, type Decider } from '../../core/events.js';
import { usesChunks } from '../../engine/plan/chunks.js';
import { mustNotHaveEnded } from '../../engine/task-service.js';
import { taskApi } from '../api/tasks.js';
import type { ServerContext } from '../context.js';
import { ApiError } from '../errors.js';
import { handle } from '../handle.js';
import { sessionsOf } from '../sessions-json.js';
import { taskDetail, taskRow } from '../task-json.js';

/** Tasks: list, detail, context, a person's decisions, cancel, restart (their events: events.ts). */
export function taskRoutes(ctx: ServerContext): Hono {
  const app = new Hono();

  handle(app, taskApi.list, async ({ query, reply }) => {
    const { limit, offset, pipeline } = query;
    const status = query.waiting === 'true' ? [...AWAITING_PERSON_STATUSES] : query.status;
    // one more than the page: whether there is a next one
    const page = ctx.store.tasks({
      ...(status ? { status } : {}),
      ...(pipeline ? { pipeline } : {}),
      limit: limit + 1,
      offset,
    });
    const shown = page.slice(0, limit).map((t) => ({ t, owner: taskOwner(ctx.store, t.id, t.status) }));
    const workers = await workersIfWaiting(
      ctx.workers,
      shown.some(({ t, owner }) => mayWaitForWorker(t.status, owner)),
    );
    return reply(200, {
      tasks: shown.map(({ t, owner }) => {
        const state = ctx.cache.state(t.id);
        return taskRow(t, state, owner, noWorkerReason(state, owner, workers));
      }),
      limit,
      offset,
      next_offset: page.length > limit ? offset + limit : null,
    });
  });

  handle(app, taskApi.detail, async ({ params, reply }) => {
    const state = ctx.cache.state(mustExist(ctx, params.id));
    // sessions round by round come from the log (the folded state keeps only the latest round)
    const sessions = state.definition.agents.some((a) => a.type === 'session')
      ? sessionsOf(ctx.store.events(state.id))
      : [];
    const owner = taskOwner(ctx.store, state.id, state.status);
    const workers = await workersIfWaiting(ctx.workers, mayWaitForWorker(state.status, owner));
    const noWorker = noWorkerReason(state, owner, workers);
    return reply(200, taskDetail(state, sessions, owner, noWorker, await pieceDiffs(state)));
  });

  handle(app, taskApi.context, ({ params }, c) => {
    const state = ctx.cache.state(mustExist(ctx, params.id));
    if (!state.contextMd.trim()) throw new ApiError(404, 'not_found', 'the task has no context yet');
    return c.text(state.contextMd);
  });

  handle(app, taskApi.approve, ({ params, body, reply }) => {
    const id = mustExist(ctx, params.id);
    ctx.tasks.decideGate(id, 'approved', body.reason ?? '', httpDecider(body.via));
    ctx.runner.run(id);
    return reply(202, { id, status: 'running' });
  });

  handle(app, taskApi.reject, ({ params, body, reply }) => {
    const id = mustExist(ctx, params.id);
    ctx.tasks.decideGate(id, 'rejected', body.reason, httpDecider(body.via));
    ctx.runner.run(id);
    return reply(202, { id, status: 'running' });
  });

  handle(app, taskApi.answer, ({ params, body, reply }) => {
    const id = mustExist(ctx, params.id);
    ctx.tasks.answer(id, body.response);
    ctx.runner.run(id);
    return reply(202, { id, status: 'running' });
  });

  handle(app, taskApi.cancel, ({ params, body, reply }) => {
    const id = mustExist(ctx, params.id);
    ctx.tasks.cancel(id, body.reason || 'cancelled from the API');
    return reply(200, { id, status: 'cancelled' });
  });

  handle(app, taskApi.resume, async ({ params, reply }) => {
    const id = mustExist(ctx, params.id);
    mustNotHaveEnded(ctx.cache.state(id), 'resume');
    // a task the queue parked goes back to the workers, its failure count cleared (as `troupe resume`)
    if (await parkedOnQueue(ctx, id)) {
      if (await ctx.resumeGivenUp([id])) return reply(202, { id, status: 'running' });
      ctx.tasks.unpark(id); // no queue here (another config): a person's resume runs it here
    }
    const holder = ctx.store.leaseHolder(id);
    if (holder && !ctx.runner.active.includes(id))
      throw new TaskBusyError(`task ${id} is being run by process ${holder.pid} on ${holder.host}`);
    ctx.runner.run(id);
    return reply(202, { id, status: 'running' });
  });

  handle(app, taskApi.restart, ({ params, body, reply }) => {
    const id = mustExist(ctx, params.id);
    const stage = ctx.tasks.restart(id, body.from_stage);
    ctx.runner.run(id);
    return reply(202, { id, status: 'running', from_stage: stage });
  });

  /** Chunks (aqm's shapes): the board, add, mark done, remove. A running task sees them on its next turn. */
  handle(app, taskApi.chunks, ({ params, reply }) => reply(200, chunksJson(ctx, mustExist(ctx, params.id))));

  handle(app, taskApi.addChunk, ({ params, body, reply }) => {
    const id = mustExist(ctx, params.id);
    const chunk = ctx.tasks.editChunks(id, { add: body.description.trim() });
    return reply(201, { chunk, ...chunksJson(ctx, id) });
  });

  handle(app, taskApi.chunkDone, ({ params, reply }) => {
    const id = mustExist(ctx, params.id);
    ctx.tasks.editChunks(id, { done: params.cid });
    const board = chunksJson(ctx, id);
    return reply(200, { chunk: board.chunks.find((k) => k.id === params.cid) ?? null, ...board });
  });

  handle(app, taskApi.removeChunk, ({ params, reply }) => {
    const id = mustExist(ctx, params.id);
    ctx.tasks.editChunks(id, { remove: params.cid });
    return reply(200, { deleted: params.cid, ...chunksJson(ctx, id) });
  });

  return app;
}

/** Parked by its log, or by the queue alone (its log refused to say so). */
async function parkedOnQueue(ctx: ServerContext, id: string): Promise<boolean> {
  if (ctx.cache.state(id).status === 'parked') return true;
  return (await ctx.givenUp())?.parked.some((p) => p.taskId === id) ?? false;
}

function chunksJson(ctx: ServerContext, id: string) {
  const state = ctx.cache.state(id);
  return {
    enabled: usesChunks(state.definition),
    chunks: state.chunks,
    total: state.chunks.length,
    done: state.chunks.filter((k) => k.status === 'done').length,
  };
}

export function mustExist(ctx: ServerContext, id: string): string {
  if (!ctx.store.task(id)) throw new ApiError(404, 'not_found', `no task ${id}`);
  return id;
}

/** Whoever holds the server's token decides through the API (or its page). */
function httpDecider(via: 'dashboard' | undefined): Decider {
  return { channel: via ?? 'api', who: 'the token holder' };
}
