import { z } from 'zod';
import { TASK_EVENT_TYPES } from '../../core/events.js';
import { named, queryInt, route, type StreamResponse } from './define.js';
import { AQM_FRAME_NAMES, type AqmFrameName, LIVE_EVENT_NAMES } from './live-events.js';
import { Chunk, task } from './tasks.js';

/**
 * The live streams: every task's events as they are appended, and one task's log then live. Their
 * frames are declared here; `live-events.ts` holds their names without zod, for the dashboard.
 */

/**
 * A stored event (`StoredEvent` of src/core/events.ts): its type and its place in the log; its
 * other fields are its type's (`TaskEvent`).
 */
export const StoredEvent = named(
  'StoredEvent',
  z
    .looseObject({
      type: z.enum(TASK_EVENT_TYPES),
      seq: z.int().min(1).describe("the global sequence number, sent as the frame's `id:`"),
      taskId: z.string(),
      at: z.string().describe('when it was appended (ISO 8601)'),
      engine: z.string().optional().describe('the troupe version that appended it'),
    })
    .describe("the other fields are its type's: `TaskEvent` in src/core/events.ts"),
);

/** Every stored event, under its type. */
const TaskEventFrame = z
  .strictObject({
    event: z.enum(TASK_EVENT_TYPES).describe("the event's type: `data.type`"),
    id: z.string().describe('its seq: what a client sends back as Last-Event-ID'),
    data: StoredEvent,
  })
  .describe('a stored event');

const task_id = z.string();
const agent_id = z.string();
const stage_number = z.int();

/** aqm's frames (reference/aqm.md §7): the data of each, as aqm sends it. */
const AQM_FRAME_DATA = {
  stage_start: z.strictObject({ task_id, agent_id, stage_number }),
  stage_output: z.strictObject({ task_id, stage_number, text: z.string() }),
  stage_complete: z.strictObject({
    task_id,
    agent_id,
    stage_number,
    output_preview: z.string().describe("the output's first 200 characters"),
    gate_result: z.null(),
  }),
  gate_waiting: z.strictObject({ task_id, agent_id, stage_number }),
  human_input_request: z.strictObject({
    task_id,
    agent_id,
    questions: z.array(z.string()),
    mode: z.string().describe('`human_input_requested.mode`'),
  }),
  pipeline_resuming: z
    .strictObject({
      task_id,
      decision: z.enum(['approved', 'rejected', 'human_input']),
      reason: z.string().optional(),
    })
    .describe("a person's gate decision, or answer"),
  chunk_update: z.discriminatedUnion('action', [
    z.strictObject({ task_id, action: z.literal('add'), chunk_id: z.string(), description: z.string() }),
    z.strictObject({
      task_id,
      action: z.literal('status'),
      chunk_id: z.string(),
      status: Chunk.shape.status,
    }),
    z.strictObject({ task_id, action: z.literal('remove'), chunk_id: z.string() }),
  ]),
  task_complete: z.strictObject({ task_id, status: z.literal('completed') }),
  task_failed: z.strictObject({ task_id, error: z.string(), stage_number: stage_number.nullable() }),
  task_cancelled: z.strictObject({ task_id, reason: z.string() }),
} satisfies Record<AqmFrameName, z.ZodType>;

/**
 * One frame of a live stream: a stored event under its type, or aqm's frame for it (no `id:`),
 * which comes first. A name of both kinds (`stage_output`…) is troupe's frame when it has an id.
 */
export const LiveFrame = named(
  'LiveFrame',
  z.xor([
    TaskEventFrame,
    ...AQM_FRAME_NAMES.map((name) =>
      z.strictObject({ event: z.literal(name), data: AQM_FRAME_DATA[name] }).describe(`aqm's ${name}`),
    ),
  ]),
);

const shared = AQM_FRAME_NAMES.filter((name) => (TASK_EVENT_TYPES as readonly string[]).includes(name));

const liveStream: StreamResponse = {
  description: `Server-Sent Events, each frame a LiveFrame: every stored event under its type (\`event: <type>\`, \`id: <seq>\`, data: the stored event); before it, for the events aqm has, aqm's frame without an id (${AQM_FRAME_NAMES.join(', ')}). ${shared.join(', ')} name frames of both kinds: troupe's has an id, and data with \`type\` and \`seq\`. \`: keepalive\` comments every 15 s.`,
  frames: LiveFrame,
  names: LIVE_EVENT_NAMES,
};

/** Where a stream starts: Last-Event-ID (what browsers send when they reconnect), else `?after=`. */
const resumeHeaders = z.object({
  'last-event-id': queryInt(0, Number.MAX_SAFE_INTEGER).optional().describe('resume after this seq'),
});
const resumeQuery = z.object({
  after: queryInt(0, Number.MAX_SAFE_INTEGER).optional().describe('resume after this seq'),
});

export const liveApi = {
  all: route({
    method: 'get',
    path: '/api/events',
    summary: 'the events of all tasks, live (from now, or after Last-Event-ID / ?after=)',
    headers: resumeHeaders,
    query: resumeQuery,
    responses: { 200: liveStream },
    errors: [400],
  }),
  task: route({
    method: 'get',
    path: '/api/tasks/:id/events',
    summary:
      "one task's events: its whole log, then live; the stream ends after the task ends (204 once nothing is left)",
    params: task,
    headers: resumeHeaders,
    query: resumeQuery,
    responses: {
      200: liveStream,
      204: { description: 'the task has ended and everything was sent' },
    },
    errors: [400, 404],
  }),
};
