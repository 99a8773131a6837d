import { isTroupeError, type TroupeErrorCode } from '../core/errors.js';
import type { TaskState } from '../engine/fold/task-state.js';

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
  /** The operator has to act first: a setup plan that changed, launch commands to paste (AMQ's 6). */
  actionRequired: 6,
  /** Files that do not match the hash pipelines.lock or the registry recorded for them (docs/registry.md). */
  integrity: 7,
  /** The store (PostgreSQL) cannot be reached or refuses the connection. */
  storeUnavailable: 8,
  /** The store's schema is newer than this troupe knows: upgrade troupe (docs/distributed.md, "Upgrading a fleet"). */
  storeTooNew: 9,
} as const;

export type ExitCode = (typeof Exit)[keyof typeof Exit];

/**
 * Each error code's exit code. troupe's own codes follow the README (2 usage or an invalid
 * pipeline, config, script or template; 3 not found); the bus keeps AMQ's (docs/bus.md: 4
 * timeout, 5 context mismatch, 1 for a collision, a partial delivery, a corrupt message or an
 * invalid `.amqrc`); 7 is content that does not match its recorded hash (docs/registry.md).
 * Everything else that stops a command is 1.
 */
export const EXIT_BY_CODE = {
  usage: Exit.usage,
  not_found: Exit.notFound,
  invalid_state: Exit.failed,
  task_busy: Exit.failed,
  pipeline_invalid: Exit.usage,
  script_invalid: Exit.usage,
  too_large: Exit.usage,
  store_invalid: Exit.usage,
  store_unavailable: Exit.storeUnavailable,
  store_too_new: Exit.storeTooNew,
  lease_lost: Exit.failed,
  template_error: Exit.usage,
  condition_invalid: Exit.usage,
  routing_config_invalid: Exit.usage,
  routing_unavailable: Exit.usage,
  authoring_failed: Exit.failed,
  runtime_error: Exit.failed,
  bus_timeout: Exit.timeout,
  context_mismatch: Exit.contextMismatch,
  bus_collision: Exit.failed,
  bus_partial_delivery: Exit.failed,
  bus_message_invalid: Exit.failed,
  bus_config_invalid: Exit.failed,
  bus_dlq_retry_refused: Exit.failed,
  action_required: Exit.actionRequired,
  git_failed: Exit.failed,
  merge_conflict: Exit.failed,
  branch_in_use: Exit.failed,
  repo_without_commits: Exit.failed,
  scripted_effect_invalid: Exit.usage,
  registry_error: Exit.failed,
  integrity_error: Exit.integrity,
  queue_unavailable: Exit.failed,
  tracker_error: Exit.failed,
  bad_request: Exit.usage,
  agent_exists: Exit.failed,
} as const satisfies Record<TroupeErrorCode, ExitCode>;

/** 1 for anything that is not a TroupeError (a bug, or an error troupe does not know). */
export function exitCodeFor(error: unknown): ExitCode {
  return isTroupeError(error) ? EXIT_BY_CODE[error.code] : Exit.failed;
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
