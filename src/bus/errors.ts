import { messageOf, TroupeError } from '../core/errors.js';

/** A watch, monitor, receipt wait or delivery wait reached its deadline (AMQ exit 4). */
export class BusTimeoutError extends TroupeError {
  readonly code = 'bus_timeout';
}

/**
 * A valid route that was refused: a session-pin conflict on a consuming command, or no eligible
 * root inside Git (AMQ exit 5).
 */
export class ContextMismatchError extends TroupeError {
  readonly code = 'context_mismatch';
}

/**
 * The operator has to act before this can go on (AMQ exit 6): `bus setup --apply` with a digest
 * that is not the plan's any more.
 */
export class ActionRequiredError extends TroupeError {
  readonly code = 'action_required';
}

/** A different file already holds this name in `new/` or `cur/`; both copies are kept. */
export class CollisionError extends TroupeError {
  readonly code = 'bus_collision';
  constructor(
    readonly path: string,
    readonly kept?: string,
  ) {
    super(`${path} already exists with different content${kept ? ` (attempt kept at ${kept})` : ''}`);
  }
}

/** Some recipients got the message and some did not: multi-recipient delivery is not atomic. */
export class PartialDeliveryError extends TroupeError {
  readonly code = 'bus_partial_delivery';
  constructor(
    readonly delivered: string[],
    readonly failed: string[],
    readonly pending: string[],
    cause: unknown,
  ) {
    const reason = messageOf(cause);
    super(
      `partial delivery: delivered to [${delivered.join(', ')}], failed for [${failed.join(', ')}], ` +
        `not attempted for [${pending.join(', ')}]: ${reason}`,
      { cause },
    );
  }
}

export type InvalidReason = 'parse_error' | 'invalid_header';

/** A message file that cannot be read as a message (DLQ reason `parse_error` or `invalid_header`). */
export class MessageInvalidError extends TroupeError {
  readonly code = 'bus_message_invalid';
  constructor(
    readonly reason: InvalidReason,
    readonly detail: string,
  ) {
    super(reason === 'invalid_header' ? `invalid header: ${detail}` : detail);
  }
}

/** An `.amqrc` that exists but cannot be used: fatal unless `--root` or `AM_ROOT` overrides it. */
export class AmqrcError extends TroupeError {
  readonly code = 'bus_config_invalid';
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`, {
      hint: 'fix the file, or pass --root / set AM_ROOT to use another root on purpose',
    });
  }
}

/** A DLQ retry that is not allowed in the envelope's current state. */
export class DlqRetryError extends TroupeError {
  readonly code = 'bus_dlq_retry_refused';
}
