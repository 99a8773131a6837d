import type { StoredEvent, TaskEvent, TaskEventType } from './events.js';

/**
 * Tables that map event types to behaviour (text for a terminal, aqm's SSE frames, a JSON view),
 * exhaustive by construction: every event type is either handled or named in the table's ignore
 * list, so a new event type does not compile until each table has decided about it. The fold's
 * reducers are the same idea without the ignore list: there, every event type must be handled.
 */

/** The handler of one event type: the event narrowed to that type, and what the table is given. */
export type EventHandler<T extends TaskEventType, R, Ctx, E extends TaskEvent> = (
  event: Extract<E, { type: T }>,
  ctx: Ctx,
) => R;

/** A handler for each of the `Types`, none missing and none more. */
export type EventHandlers<Types extends TaskEventType, R, Ctx, E extends TaskEvent> = {
  [T in Types]: EventHandler<T, R, Ctx, E>;
};

export interface EventTable<R, Ctx, E extends TaskEvent> {
  readonly handlers: Partial<EventHandlers<TaskEventType, R, Ctx, E>>;
  /** The event types this table has nothing to do with, said on purpose. */
  readonly ignored: ReadonlySet<TaskEventType>;
}

/**
 * `eventTable<R, Ctx>()(handlers, ignored)`: the first call fixes what handlers return and
 * receive; the second takes the types ignored on purpose and requires a handler for every other
 * type (a missing one, or one for an ignored or unknown type, does not compile). `E` is the event
 * shape handled: stored events by default.
 */
export function eventTable<R, Ctx = void, E extends TaskEvent = StoredEvent>() {
  return <const Ignored extends TaskEventType>(
    handlers: EventHandlers<Exclude<TaskEventType, NoInfer<Ignored>>, R, Ctx, E>,
    ignored: readonly Ignored[],
  ): EventTable<R, Ctx, E> => ({
    handlers: handlers as EventTable<R, Ctx, E>['handlers'],
    ignored: new Set(ignored),
  });
}

/** The table's answer to `event`, or undefined when its type is one the table ignores. */
export function handleEvent<R, Ctx, E extends TaskEvent>(
  table: EventTable<R, Ctx, E>,
  event: E,
  ...[ctx]: Ctx extends void ? [] : [ctx: Ctx]
): R | undefined {
  const handler = table.handlers[event.type as TaskEventType] as ((event: E, ctx: Ctx) => R) | undefined;
  return handler?.(event, ctx as Ctx);
}
