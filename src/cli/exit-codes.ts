import { isTroupeError } from '../core/errors.js';
import type { TaskState } from '../engine/task-state.js';

/** The documented exit codes of every troupe command. */
export const Exit = {
  ok: 0,
  failed: 1,
  usage: 2,
  notFound: 3,
  timeout: 4,
  /** The message bus refused a valid route: session-pin conflict, or no eligible root inside Git (AMQ's 5). */
  contextMismatch: 5,
  waitingForHuman: 6,
} as const;

export type ExitCode = (typeof Exit)[keyof typeof Exit];

export function exitCodeFor(error: unknown): ExitCode {
  if (!isTroupeError(error)) return Exit.failed;
  switch (error.code) {
    case 'usage':
    case 'pipeline_invalid':
    case 'script_invalid':
    case 'config_invalid':
    case 'template_error':
      return Exit.usage;
    case 'not_found':
      return Exit.notFound;
    case 'bus_timeout':
      return Exit.timeout;
    case 'context_mismatch':
      return Exit.contextMismatch;
    default:
      return Exit.failed;
  }
}

/** How a run or status command exits for a task in this state. */
export function exitCodeForTask(state: TaskState): ExitCode {
  switch (state.status) {
    case 'completed':
      return Exit.ok;
    case 'awaiting_gate':
    case 'awaiting_human_input':
      return Exit.waitingForHuman;
    case 'failed':
      return state.failure?.errorKind === 'timeout' ? Exit.timeout : Exit.failed;
    default:
      return Exit.failed;
  }
}
