import { z } from 'zod';
import { TASK_EVENT_TYPES } from '../../core/events.js';
import { json, queryInt, route } from './define.js';

/** The event log of every task, live; the server's own state; this contract. */

/** Where a stream starts: Last-Event-ID (what browsers send when they reconnect), else `?after=`. */
export const resumeHeaders = z.object({
  'last-event-id': queryInt(0, Number.MAX_SAFE_INTEGER).optional().describe('resume after this seq'),
});
export const resumeQuery = z.object({
  after: queryInt(0, Number.MAX_SAFE_INTEGER).optional().describe('resume after this seq'),
});

export const sseDescription = `Server-Sent Events. Each event is sent under troupe's type with \`id: <seq>\` (its data is the stored event), preceded by aqm's name for the events aqm has (stage_start, stage_output, stage_complete, gate_waiting, human_input_request, pipeline_resuming, task_complete, task_failed, task_cancelled). \`: keepalive\` comments every 15 s. troupe's types (the \`event:\` names): ${TASK_EVENT_TYPES.join(', ')}.`;

export const serverApi = {
  events: route({
    method: 'get',
    path: '/api/events',
    summary: 'the events of all tasks, live (from now, or after Last-Event-ID / ?after=)',
    headers: resumeHeaders,
    query: resumeQuery,
    responses: { 200: { description: sseDescription, content: 'text/event-stream' } },
    errors: [400],
  }),
  health: route({
    method: 'get',
    path: '/api/health',
    summary: 'the server is up',
    responses: {
      200: json(
        'ok',
        z.strictObject({
          ok: z.literal(true),
          version: z.string(),
          last_seq: z.int(),
          running: z.array(z.string()).describe('the tasks this process runs now'),
        }),
      ),
    },
  }),
  openapi: route({
    method: 'get',
    path: '/api/openapi.json',
    summary: 'this document',
    responses: { 200: json('OpenAPI 3.1', z.record(z.string(), z.unknown())) },
  }),
};
