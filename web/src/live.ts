import { useEffect, useRef } from 'react';
import { onTaskEvents } from '../../src/server/api/live-events';
import type { LiveEvent } from './api';

/**
 * Follows an SSE stream of the event log (frames declared in src/server/api/events.ts). The browser reconnects by itself with Last-Event-ID,
 * so nothing is missed; a task's stream answers 204 once the task has ended, which stops it.
 */
export function useEventStream(url: string | null, onEvent: (event: LiveEvent) => void): void {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  useEffect(() => {
    if (!url) return;
    const source = new EventSource(url);
    // every task event, from the declared names; aqm's frames (some named alike) are not events
    onTaskEvents(source, (event) => handler.current(event));
    return () => source.close();
  }, [url]);
}

/** Calls `fn` at most once per `ms`, and once more after the last call. */
export function useThrottled(fn: () => void, ms: number): () => void {
  const state = useRef<{ timer: number | null; pending: boolean; fn: () => void }>({
    timer: null,
    pending: false,
    fn,
  });
  state.current.fn = fn;
  useEffect(
    () => () => {
      if (state.current.timer !== null) window.clearTimeout(state.current.timer);
    },
    [],
  );
  return () => {
    const s = state.current;
    if (s.timer !== null) {
      s.pending = true;
      return;
    }
    s.fn();
    const tick = () => {
      if (s.pending) {
        s.pending = false;
        s.fn();
        s.timer = window.setTimeout(tick, ms);
      } else s.timer = null;
    };
    s.timer = window.setTimeout(tick, ms);
  };
}
