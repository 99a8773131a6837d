/**
 * The message bus's closed vocabularies (docs/bus.md), declared once: the bus validates headers
 * against them, the HTTP API declares them, and the dashboard offers them.
 */

/** What a message is for; AMQ's set, in its order. */
export const BUS_KINDS = [
  'brainstorm',
  'review_request',
  'review_response',
  'question',
  'answer',
  'decision',
  'status',
  'todo',
] as const;
export type BusKind = (typeof BUS_KINDS)[number];

export const BUS_PRIORITIES = ['urgent', 'normal', 'low'] as const;
export type BusPriority = (typeof BUS_PRIORITIES)[number];

export function isBusKind(value: string): value is BusKind {
  return (BUS_KINDS as readonly string[]).includes(value);
}

export function isBusPriority(value: string): value is BusPriority {
  return (BUS_PRIORITIES as readonly string[]).includes(value);
}
