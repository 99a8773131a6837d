import { z } from 'zod';
import { json, route } from './define.js';

/** The workers on the work queue (`troupe worker`), as `troupe workers` lists them. */

export const WorkerEntry = z.strictObject({
  id: z.string(),
  host: z.string(),
  pid: z.int(),
  runtimes: z.array(z.string()).describe('the runtimes it takes tasks for'),
  labels: z.array(z.string()),
  tasks: z.array(z.string()).describe('the tasks it is running now'),
  started: z.string(),
  last_seen: z.string(),
  version: z.string().nullable().describe('the troupe it runs; null: a worker older than this field'),
  stages: z.int().describe('stages it ran to their end since it started (0: a worker older than the counts)'),
  takeovers: z.int().describe('tasks it took over from a holder that never handed them back (died, cut off)'),
  lease_losses: z.int().describe('tasks whose lease it lost to another worker'),
  wake_failures: z.int().describe('wake-ups that failed in it (retried, or dead)'),
  gone: z.boolean().describe('not seen for 30 s: stopped or cut off'),
});

export const WorkerList = z.strictObject({
  queue: z
    .string()
    .nullable()
    .describe("the queue's database, without its password; null: no queue (SQLite)"),
  workers: z.array(WorkerEntry),
});

export const LaneEntry = z.strictObject({
  lane: z.string().describe('a runtime (claude), any, check, or a labelled lane (claude--gpu)'),
  backlog: z.int().describe('wake-ups not taken yet, due or scheduled'),
  due: z.int().describe('of those, the ones due now'),
  oldest_wait_seconds: z
    .int()
    .nullable()
    .describe('how long the oldest due wake-up has waited; null: none due'),
  active: z.int().describe('taken by a worker and not finished'),
  retrying: z.int().describe('waiting to be tried again after a failure'),
  failed: z.int().describe('failed past their retry limit'),
  paused: z.boolean().describe('`troupe queue pause`: workers take none of its wake-ups'),
});

export const ActiveJobEntry = z.strictObject({
  lane: z.string(),
  task_id: z.string(),
  started: z.string(),
  retries: z.int(),
  holder: z.string().nullable().describe('the live worker running the task; null: none (it died)'),
});

export const QueueSummary = z.strictObject({
  queue: z
    .string()
    .nullable()
    .describe("the queue's database, without its password; null: no queue (SQLite)"),
  lanes: z.array(LaneEntry),
  active: z.array(ActiveJobEntry),
  dead_letters: z.int().describe('tasks in the dead-letter queue'),
});

export const workerApi = {
  queue: route({
    method: 'get',
    path: '/api/queue',
    summary:
      'the work queue per lane: backlog, oldest waiting wake-up, active jobs and their workers, dead letters',
    responses: { 200: json('queue', QueueSummary) },
  }),
  metrics: route({
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics: the queue per lane, workers by state, dead letters, tasks by status',
    responses: { 200: { description: 'Prometheus text format', content: 'text/plain; version=0.0.4' } },
  }),
  workers: route({
    method: 'get',
    path: '/api/workers',
    summary:
      'the workers on the queue: runtimes, labels, tasks, when last seen, stages run, takeovers, lease losses, wake-up failures',
    responses: { 200: json('workers', WorkerList) },
  }),
};
