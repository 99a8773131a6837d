import { z } from 'zod';
import { TASK_SIZES } from '../../core/spec.js';
import { json, nonBlank, route, withAliases } from './define.js';

/** Start work: a run of a pipeline, or a follow-up fix of a finished task. Both run in the background. */

const script = z
  .union([z.string(), z.record(z.string(), z.unknown())])
  .nullable()
  .describe(
    'run offline on the scripted runtime: a script file (relative to the project) or the script itself',
  );

export const RunRequest = withAliases(
  { description: 'input', agent_id: 'agent' },
  z.object({
    input: nonBlank.describe('what to do (aqm: description)'),
    pipeline: z.string().optional().describe('pipeline name; default: the project default'),
    agent: z.string().optional().describe('start at this agent (aqm: agent_id)'),
    size: z
      .enum(TASK_SIZES)
      .optional()
      .describe('the task size; agents with `spec: required` need a spec from M'),
    params: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String)).optional(),
    script: script.optional(),
  }),
);

export type RunRequest = z.output<typeof RunRequest>;

export const FixRequest = withAliases(
  { input: 'description', agent_id: 'agent' },
  z.object({
    parent_task_id: nonBlank,
    description: nonBlank.describe('what to fix (also: input)'),
    agent: z.string().optional().describe('start at this agent (aqm: agent_id)'),
    script: script.optional(),
  }),
);

export type FixRequest = z.output<typeof FixRequest>;

export const runApi = {
  run: route({
    method: 'post',
    path: '/api/run',
    summary: 'start a run of a pipeline; it runs in the background',
    body: RunRequest,
    responses: {
      202: json(
        'started',
        z.strictObject({
          task_id: z.string(),
          status: z.literal('started'),
          agent_id: z.string().nullable(),
        }),
      ),
    },
    errors: [400, 404, 422],
  }),
  fix: route({
    method: 'post',
    path: '/api/fix',
    summary: "start a follow-up task carrying a task's context",
    body: FixRequest,
    responses: {
      202: json(
        'started',
        z.strictObject({ task_id: z.string(), status: z.literal('started'), parent_task_id: z.string() }),
      ),
    },
    errors: [400, 404, 409, 422],
  }),
};
