import type { EventStore } from '../core/event-store.js';
import { isTerminal } from '../core/events.js';
import { framesFor, isEnd } from './aqm-events.js';
import type { EventHub } from './event-hub.js';

export interface StreamOptions {
  /** Send events after this seq (Last-Event-ID, `?after=`). */
  after: number;
  /** Only this task's events; the stream ends after the task's last event. */
  taskId: string | null;
  keepaliveMs?: number;
  /** Aborted when the client goes away. */
  signal?: AbortSignal;
}

const HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

/**
 * Server-Sent Events from the event log. Each event carries `id: <seq>`; a browser that
 * reconnects sends it back as Last-Event-ID and gets exactly what it has not seen. A task's
 * stream closes after the task ends; asked again after that, it answers 204, which tells
 * EventSource to stop reconnecting.
 */
export function eventStream(hub: EventHub, store: EventStore, options: StreamOptions): Response {
  const { taskId } = options;
  if (taskId) {
    const task = store.task(taskId);
    if (task && isTerminal(task.status) && nothingAfter(store, taskId, options.after)) {
      return new Response(null, { status: 204 });
    }
  }
  const encoder = new TextEncoder();
  let cursor = options.after;
  let opened = false;
  let waiting: { cancel: () => void } | null = null;
  let closed = false;
  const stop = () => {
    closed = true;
    waiting?.cancel();
  };
  options.signal?.addEventListener('abort', stop, { once: true });

  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!opened) {
        opened = true;
        controller.enqueue(encoder.encode(`retry: 1000\n: connected at ${cursor}\n\n`));
        return;
      }
      for (;;) {
        if (closed || hub.closed) {
          controller.close();
          return;
        }
        const { events, cursor: next } = hub.read(cursor, taskId);
        cursor = next;
        if (events.length > 0) {
          controller.enqueue(encoder.encode(events.map(framesFor).join('')));
          if (taskId && events.some(isEnd)) {
            stop();
            controller.close();
          }
          return;
        }
        const wait = hub.next(options.keepaliveMs ?? 15_000);
        waiting = wait;
        const woke = await wait.promise;
        waiting = null;
        if (!woke && !closed && !hub.closed) {
          controller.enqueue(encoder.encode(': keepalive\n\n'));
          return;
        }
      }
    },
    cancel() {
      stop();
    },
  });
  return new Response(body, { headers: HEADERS });
}

/** Whether the task has no event after `seq`. (Left unfinished, the store's iterator would keep its statement busy.) */
function nothingAfter(store: EventStore, taskId: string, seq: number): boolean {
  for (const _ of store.events(taskId, seq)) return false;
  return true;
}
