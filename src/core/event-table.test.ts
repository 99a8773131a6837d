import { describe, expect, it } from 'vitest';
import { eventTable, handleEvent } from './event-table.js';
import { TASK_EVENT_TYPES, type TaskEvent, type TaskEventType } from './events.js';

const everyTypeBut = <T extends TaskEventType>(...handled: T[]) =>
  TASK_EVENT_TYPES.filter((type): type is Exclude<TaskEventType, T> => !handled.includes(type as T));

describe('eventTable', () => {
  it('answers the types it handles, with the event narrowed and the context given', () => {
    const table = eventTable<string, { prefix: string }, TaskEvent>()(
      {
        task_cancelled: (event, ctx) => `${ctx.prefix}${event.reason}`,
        task_failed: (event, ctx) => `${ctx.prefix}${event.reason} at ${event.stage}`,
      },
      everyTypeBut('task_cancelled', 'task_failed'),
    );
    expect(handleEvent(table, { type: 'task_cancelled', reason: 'enough' }, { prefix: '✘ ' })).toBe(
      '✘ enough',
    );
    expect(handleEvent(table, { type: 'task_completed' } as TaskEvent, { prefix: '' })).toBeUndefined();
  });

  it('does not compile with a type neither handled nor ignored, handled and ignored, or unknown', () => {
    eventTable<number, void, TaskEvent>()(
      // @ts-expect-error task_failed has no handler: a new event type fails the same way in every table
      { task_cancelled: () => 1 },
      everyTypeBut('task_cancelled', 'task_failed'),
    );
    eventTable<number, void, TaskEvent>()(
      // @ts-expect-error task_created is ignored, so it cannot have a handler too
      { task_cancelled: () => 1, task_created: () => 2 },
      everyTypeBut('task_cancelled'),
    );
    eventTable<number, void, TaskEvent>()(
      // @ts-expect-error task_canceled is no event type
      { task_cancelled: () => 1, task_canceled: () => 2 },
      everyTypeBut('task_cancelled'),
    );
  });
});
