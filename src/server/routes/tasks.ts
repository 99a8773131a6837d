import { Hono } from 'hono';
import { AWAITING_PERSON_STATUSES, isTaskStatus, TASK_STATUSES, type TaskStatus } from '../../core/events.js';
import { usesChunks } from '../../engine/chunks.js';
import { jsonBody, optionalString, requiredString, type ServerContext } from '../context.js';
import { ApiError, badRequest } from '../errors.js';
import { sessionsOf } from '../sessions-json.js';
import { eventStream, startSeq } from '../sse.js';
import { taskDetail, taskRow } from '../task-json.js';

/** Tasks: list, detail, context, a person's decisions, cancel, restart, and each task's events. */
export function taskRoutes(ctx: ServerContext): Hono {
  const app = new Hono();

  app.get('/api/tasks', (c) => {
    const status =
      c.req.query('waiting') === 'true'
        ? [...AWAITING_PERSON_STATUSES]
        : parseStatuses(c.req.query('status'));
    const limit = intParam(c.req.query('limit'), 50, 1, 500);
    const offset = intParam(c.req.query('offset'), 0, 0, Number.MAX_SAFE_INTEGER);
    const pipeline = c.req.query('pipeline');
    const rows = ctx.store
      .tasks({
        ...(status ? { status } : {}),
        limit: pipeline ? -1 : limit + 1,
        offset: pipeline ? 0 : offset,
      })
      .filter((t) => !pipeline || t.pipeline === pipeline);
    const page = pipeline ? rows.slice(offset, offset + limit + 1) : rows;
    return c.json({
      tasks: page.slice(0, limit).map((t) => taskRow(t, ctx.cache.state(t.id))),
      limit,
      offset,
      next_offset: page.length > limit ? offset + limit : null,
    });
  });

  app.get('/api/tasks/:id', (c) => {
    const state = ctx.cache.state(mustExist(ctx, c.req.param('id')));
    // sessions round by round come from the log (the folded state keeps only the latest round)
    const sessions = state.definition.agents.some((a) => a.type === 'session')
      ? sessionsOf(ctx.store.events(state.id))
      : [];
    return c.json(taskDetail(state, sessions));
  });

  app.get('/api/tasks/:id/context', (c) => {
    const state = ctx.cache.state(mustExist(ctx, c.req.param('id')));
    if (!state.contextMd.trim()) throw new ApiError(404, 'not_found', 'the task has no context yet');
    return c.text(state.contextMd);
  });

  app.get('/api/tasks/:id/events', (c) => {
    const id = mustExist(ctx, c.req.param('id'));
    return eventStream(ctx.hub, ctx.store, {
      taskId: id,
      after: startSeq(c.req.header('last-event-id'), c.req.query('after'), 0),
      signal: c.req.raw.signal,
    });
  });

  app.post('/api/tasks/:id/approve', async (c) => {
    const id = mustExist(ctx, c.req.param('id'));
    const reason = optionalString(await jsonBody(c), 'reason') ?? '';
    ctx.tasks.decideGate(id, 'approved', reason);
    return resumed(c, ctx, id);
  });

  app.post('/api/tasks/:id/reject', async (c) => {
    const id = mustExist(ctx, c.req.param('id'));
    const body = await jsonBody(c);
    const reason = optionalString(body, 'reason') ?? '';
    if (!reason.trim()) throw badRequest('a rejection needs a reason');
    ctx.tasks.decideGate(id, 'rejected', reason);
    return resumed(c, ctx, id);
  });

  app.post('/api/tasks/:id/human-input', async (c) => {
    const id = mustExist(ctx, c.req.param('id'));
    const answer = requiredString(await jsonBody(c), 'response', 'answer');
    ctx.tasks.answer(id, answer);
    return resumed(c, ctx, id);
  });

  app.post('/api/tasks/:id/cancel', async (c) => {
    const id = mustExist(ctx, c.req.param('id'));
    const reason = optionalString(await jsonBody(c), 'reason') || 'cancelled from the API';
    ctx.tasks.cancel(id, reason);
    return c.json({ id, status: 'cancelled' });
  });

  app.post('/api/tasks/:id/restart', async (c) => {
    const id = mustExist(ctx, c.req.param('id'));
    const body = await jsonBody(c);
    const from = body.from_stage ?? body.fromStage;
    if (from !== undefined && from !== null && typeof from !== 'number')
      throw badRequest('from_stage must be a number');
    const stage = ctx.tasks.restart(id, from ?? undefined);
    ctx.runner.run(id);
    return c.json({ id, status: 'running', from_stage: stage }, 202);
  });

  /** Chunks (aqm's shapes): the board, add, mark done, remove. A running task sees them on its next turn. */
  app.get('/api/tasks/:id/chunks', (c) => c.json(chunksJson(ctx, mustExist(ctx, c.req.param('id')))));

  app.post('/api/tasks/:id/chunks', async (c) => {
    const id = mustExist(ctx, c.req.param('id'));
    const description = requiredString(await jsonBody(c), 'description');
    const chunk = ctx.tasks.editChunks(id, { add: description.trim() });
    return c.json({ chunk, ...chunksJson(ctx, id) }, 201);
  });

  app.patch('/api/tasks/:id/chunks/:cid', async (c) => {
    const id = mustExist(ctx, c.req.param('id'));
    const status = requiredString(await jsonBody(c), 'status');
    if (status !== 'done') {
      throw badRequest(
        status === 'pending' || status === 'in_progress'
          ? `a chunk can only be marked done (agents set ${status} themselves)`
          : `unknown chunk status "${status}"; use "done"`,
      );
    }
    ctx.tasks.editChunks(id, { done: c.req.param('cid') });
    const board = chunksJson(ctx, id);
    return c.json({ chunk: board.chunks.find((k) => k.id === c.req.param('cid')) ?? null, ...board });
  });

  app.delete('/api/tasks/:id/chunks/:cid', (c) => {
    const id = mustExist(ctx, c.req.param('id'));
    ctx.tasks.editChunks(id, { remove: c.req.param('cid') });
    return c.json({ deleted: c.req.param('cid'), ...chunksJson(ctx, id) });
  });

  return app;
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

function resumed(c: import('hono').Context, ctx: ServerContext, id: string): Response {
  ctx.runner.run(id);
  return c.json({ id, status: 'running' }, 202);
}

export function mustExist(ctx: ServerContext, id: string): string {
  if (!ctx.store.task(id)) throw new ApiError(404, 'not_found', `no task ${id}`);
  return id;
}

function parseStatuses(value: string | undefined): TaskStatus[] | undefined {
  if (!value) return undefined;
  const list = value.split(',').map((s) => s.trim());
  const unknown = list.filter((s) => !isTaskStatus(s));
  if (unknown.length)
    throw badRequest(`unknown status ${unknown.join(', ')}; one of ${TASK_STATUSES.join(', ')}`);
  return list as TaskStatus[];
}

function intParam(value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw badRequest(`expected an integer from ${min} to ${max}, got ${value}`);
  return n;
}
