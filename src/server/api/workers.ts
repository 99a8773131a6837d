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
  gone: z.boolean().describe('not seen for 30 s: stopped or cut off'),
});

export const WorkerList = z.strictObject({
  queue: z
    .string()
    .nullable()
    .describe("the queue's database, without its password; null: no queue (SQLite)"),
  workers: z.array(WorkerEntry),
});

export const workerApi = {
  workers: route({
    method: 'get',
    path: '/api/workers',
    summary: 'the workers on the queue: runtimes, labels, tasks, when last seen',
    responses: { 200: json('workers', WorkerList) },
  }),
};
