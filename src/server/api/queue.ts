import { z } from 'zod';
import { json, named, route } from './define.js';
import { TaskStatus } from './tasks.js';

/** What the work queue gave up on: parked tasks (their wake-ups kept failing) and dead letters. */

export const ParkedEntry = named(
  'ParkedTask',
  z.strictObject({
    id: z.string(),
    status: TaskStatus.describe("the task's status in its log (parked, unless the log refused to say so)"),
    reason: z.string().describe("the last failed run's error"),
    failures: z.int().describe('failed runs counted against the task'),
    at: z.string().describe('when it was parked'),
  }),
);

const DeadLetterEntry = z.strictObject({
  id: z.string().describe('the task the wake-up was for (one this store may not have)'),
  error: z.string(),
  at: z.string(),
});

const Resumed = z.strictObject({
  id: z.string(),
  parked: z
    .strictObject({ reason: z.string(), failures: z.int(), at: z.string() })
    .nullable()
    .describe('why it was parked; null: it was not'),
  queued: z.int().describe('wake-ups queued for it'),
});

export const queueApi = {
  parked: route({
    method: 'get',
    path: '/api/parked',
    summary: 'tasks the work queue parked, and dead letters of other wake-ups (as `troupe list --dead`)',
    responses: {
      200: json(
        'parked tasks and dead letters',
        z.strictObject({
          queue: z
            .string()
            .nullable()
            .describe("the queue's database, without its password; null: no queue (SQLite)"),
          parked: z.array(ParkedEntry),
          dead_letters: z.array(DeadLetterEntry),
        }),
      ),
    },
  }),
  resumeParked: route({
    method: 'post',
    path: '/api/parked/resume',
    summary:
      'hand every parked task back to the workers, their failure counts cleared (`troupe resume --parked`)',
    responses: {
      200: json('what was resumed (none without a queue)', z.strictObject({ resumed: z.array(Resumed) })),
    },
  }),
};
