import { basename, resolve } from 'node:path';
import { UsageError } from '../../core/errors.js';
import type { OrchestratorEvent } from './orchestrator.js';

/**
 * Symphony's workspace hooks (WORKFLOW.md `hooks:`), as AMQ's `integration symphony emit`:
 * Symphony runs each hook in the workspace directory, so the workspace is the working
 * directory (or `--workspace`) and its key the directory's name (or `--identifier`).
 */

export const SYMPHONY_EVENTS = ['after_create', 'before_run', 'after_run', 'before_remove'] as const;

const STATES: Record<(typeof SYMPHONY_EVENTS)[number], string> = {
  after_create: 'created',
  before_run: 'running',
  after_run: 'completed',
  before_remove: 'removing',
};

/** A workspace key fit for a thread id: lower-case letters, digits, `-` and `_`. */
export function workspaceKey(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '-');
}

export function symphonyEvent(options: {
  event: string;
  workspace: string;
  identifier?: string;
}): OrchestratorEvent {
  const event = options.event as (typeof SYMPHONY_EVENTS)[number];
  if (!SYMPHONY_EVENTS.includes(event)) {
    throw new UsageError(`invalid --event '${options.event}' (one of ${SYMPHONY_EVENTS.join(', ')})`);
  }
  const path = resolve(options.workspace);
  const key = workspaceKey(options.identifier || basename(path));
  const state = STATES[event];
  const significant = event === 'after_run' || event === 'before_remove';
  return {
    name: 'symphony',
    transport: 'hook',
    event,
    workspace: { path, key },
    task: { id: key, state },
    state,
    subject: `[symphony] ${event}: ${key}`,
    body: `Event: ${event}\nWorkspace: ${path}\nIdentifier: ${key}\n`,
    kind: 'status',
    priority: significant ? 'normal' : 'low',
  };
}
