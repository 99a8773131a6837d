import { isTroupeError, messageOf } from '../core/errors.js';
import { printableLines } from '../core/printable.js';
import { Exit, exitCodeFor } from './exit-codes.js';

/**
 * Wraps a command's handler: the handler returns its exit code; any error becomes one line
 * on stderr (the stack only with TROUPE_DEBUG=1) and its documented exit code.
 */
export function action<A extends unknown[]>(handler: (...args: A) => Promise<number | undefined>) {
  return async (...args: A): Promise<void> => {
    try {
      const code = await handler(...args);
      process.exitCode = code ?? Exit.ok;
    } catch (error) {
      reportError(error);
      process.exitCode = exitCodeFor(error);
    }
  };
}

export function reportError(error: unknown): void {
  if (process.env.TROUPE_DEBUG) {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  }
  // a message may quote what others wrote (a lock's key, a registry's file name): no escapes reach the terminal
  const message = printableLines(messageOf(error));
  process.stderr.write(`troupe: ${message}\n`);
  if (isTroupeError(error) && error.hint) process.stderr.write(`  hint: ${printableLines(error.hint)}\n`);
}
