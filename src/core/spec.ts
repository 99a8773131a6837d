/** Task sizes, and the spec an agent with `spec: required` writes before M-or-larger work. */

export const TASK_SIZES = ['S', 'M', 'L', 'XL'] as const;
export type TaskSize = (typeof TASK_SIZES)[number];

/** A task's size and who set it: `cli`, `api`, or the id of the agent whose `SIZE:` said so. */
export interface SizeRecord {
  size: TaskSize;
  by: string;
}

export interface Spec {
  requirements: string[];
  files: string[];
  verification: string[];
  [extra: string]: unknown;
}

export function parseTaskSize(text: string): TaskSize | null {
  const upper = text.trim().toUpperCase();
  return (TASK_SIZES as readonly string[]).includes(upper) ? (upper as TaskSize) : null;
}
