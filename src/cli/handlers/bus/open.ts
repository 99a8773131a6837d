import { type MessageBus, openBus } from '../../../bus/bus.js';
import { ContextMismatchError } from '../../../bus/errors.js';
import { parseHandle } from '../../../bus/handle.js';
import { pinMismatch, type ResolvedRoot, resolveRoot } from '../../../bus/root.js';
import { UsageError } from '../../../core/errors.js';
import type { CommandIo } from '../../command-io.js';
import { type BusFlags, warn } from './context.js';

export interface Opened {
  bus: MessageBus;
  resolved: ResolvedRoot;
}

/**
 * Resolves the root as AMQ does and opens the bus. Commands that consume or change mail refuse a
 * root that differs from the shell's session pin (exit 5); read-only ones only warn.
 */
export function openFromFlags(flags: BusFlags, io: CommandIo, mode: 'consume' | 'read' = 'consume'): Opened {
  const resolved = resolveRoot(flags.root ? { root: flags.root } : {});
  for (const w of resolved.warnings) warn(io, w);
  const mismatch = pinMismatch(resolved);
  if (mismatch) {
    if (flags.ignoreSessionPin && !flags.root)
      throw new UsageError('--ignore-session-pin needs an explicit --root');
    if (mode === 'consume' && !flags.ignoreSessionPin) {
      throw new ContextMismatchError(mismatch, {
        hint: 'pass --ignore-session-pin with --root if this is on purpose',
      });
    }
    warn(io, mismatch);
  }
  const bus = openBus(resolved.root, {
    baseRoot: resolved.baseRoot,
    ...(resolved.session ? { session: resolved.session } : {}),
    ...(resolved.amqrc ? { amqrc: resolved.amqrc } : {}),
    strict: flags.strict === true,
  });
  return { bus, resolved };
}

/** `--me`, else AM_ME. */
export function me(flags: BusFlags): string {
  const raw = flags.me ?? process.env.AM_ME;
  if (!raw) throw new UsageError('--me is required (or set AM_ME)');
  return parseHandle(raw, '--me');
}
