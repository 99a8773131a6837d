import { type StoredEvent, TASK_EVENT_TYPES } from '../../core/events.js';

/**
 * The live streams' frame names and how a listener reads them, without zod, so the dashboard can
 * import them (events.ts declares the frames themselves). Every stored event is sent under its
 * type with `id: <seq>`; an event aqm has is preceded by aqm's frame under aqm's name. Four of
 * aqm's names are troupe types too (`stage_output`, `gate_waiting`, `task_failed`,
 * `task_cancelled`): a listener tells the two frames apart by their data (`taskEventOf`).
 */

/** aqm's frame names (reference/aqm.md §7), for front ends written for aqm. */
export const AQM_FRAME_NAMES = [
  'stage_start',
  'stage_output',
  'stage_complete',
  'gate_waiting',
  'human_input_request',
  'pipeline_resuming',
  'chunk_update',
  'task_complete',
  'task_failed',
  'task_cancelled',
] as const;
export type AqmFrameName = (typeof AQM_FRAME_NAMES)[number];

/** Every `event:` name the streams send, once. */
export const LIVE_EVENT_NAMES: readonly string[] = [
  ...new Set<string>([...TASK_EVENT_TYPES, ...AQM_FRAME_NAMES]),
];

/** A frame as EventSource hands it over: its `event:` name as `type`, its `data:` text. */
export interface LiveMessage {
  type: string;
  data: string;
}

/** What a listener subscribes on: an EventSource, or anything that dispatches its frames alike. */
export interface LiveSource {
  addEventListener(name: string, listener: (message: LiveMessage) => void): void;
}

const TASK_EVENT_TYPE_SET: ReadonlySet<string> = new Set(TASK_EVENT_TYPES);

/**
 * The stored event a frame carries; null for aqm's frame of the same name (its data has no
 * `type` and no `seq`) and for data that is not JSON.
 */
export function taskEventOf(message: LiveMessage): StoredEvent | null {
  if (!TASK_EVENT_TYPE_SET.has(message.type)) return null;
  let data: unknown;
  try {
    data = JSON.parse(message.data);
  } catch {
    return null;
  }
  if (typeof data !== 'object' || data === null) return null;
  const event = data as { type?: unknown; seq?: unknown; taskId?: unknown };
  const carries =
    event.type === message.type && typeof event.seq === 'number' && typeof event.taskId === 'string';
  return carries ? (data as StoredEvent) : null;
}

/**
 * Calls `listener` with every task event of a live stream, once each: it subscribes to every
 * event type (named frames reach only the listeners of their name) and skips aqm's frames.
 */
export function onTaskEvents(source: LiveSource, listener: (event: StoredEvent) => void): void {
  const relay = (message: LiveMessage) => {
    const event = taskEventOf(message);
    if (event) listener(event);
  };
  for (const type of TASK_EVENT_TYPES) source.addEventListener(type, relay);
}
