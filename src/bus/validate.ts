import { BUS_KINDS, BUS_PRIORITIES, isBusKind, isBusPriority } from '../core/bus-vocabulary.js';
import { parseRfc3339 } from './clock.js';
import { HUMAN, isSafeMessageId, isValidHandle } from './handle.js';
import type { Header } from './message.js';

export interface ValidateOptions {
  /** Also require schema 1 and known handles (config agents plus `user`). */
  strict?: boolean;
  agents?: readonly string[];
}

/** The checks read/drain/monitor/watch/list apply; returns what is wrong, or undefined. */
export function headerProblem(h: Header, options: ValidateOptions = {}): string | undefined {
  if (!isSafeMessageId(h.id)) return `id '${h.id}' is not a safe base name`;
  if (!isValidHandle(h.from)) return `from '${h.from}' is not a valid handle`;
  if (h.to.length === 0) return 'to is empty';
  const badTo = h.to.find((to) => !isValidHandle(to));
  if (badTo !== undefined) return `to '${badTo}' is not a valid handle`;
  if (h.thread === '') return 'thread is empty';
  if (h.thread.trim() !== h.thread) return 'thread has surrounding whitespace';
  if (h.created === '') return 'created is empty';
  if (h.created.trim() !== h.created || parseRfc3339(h.created) === undefined) {
    return `created '${h.created}' is not an RFC3339 time`;
  }
  if (h.priority && !isBusPriority(h.priority)) {
    return `priority '${h.priority}' is not one of ${BUS_PRIORITIES.join(', ')}`;
  }
  if (h.kind && !isBusKind(h.kind)) {
    return `kind '${h.kind}' is not one of ${BUS_KINDS.join(', ')}`;
  }
  if (options.strict) {
    if (h.schema !== 1) return `schema ${h.schema} is not 1`;
    const known = new Set([...(options.agents ?? []), HUMAN]);
    for (const handle of [h.from, ...h.to]) {
      if (!known.has(handle)) return `unknown handle '${handle}'`;
    }
  }
  return undefined;
}
