import { randomBytes } from 'node:crypto';
import { idStamp, nowNs } from './clock.js';

/** `2026-08-22T11-12-13.123Z_pid4242_9f3a01bc`: sorts chronologically, unique across processes. */
export function newMessageId(ns: bigint = nowNs()): string {
  return `${idStamp(ns)}_pid${process.pid}_${randomBytes(4).toString('hex')}`;
}

export function newDlqId(): string {
  return `dlq_${nowNs()}_${process.pid}_${randomBytes(6).toString('hex')}`;
}

/** A delivery attempt's name in `tmp/`: hidden, unique, so a leftover never blocks a retry. */
export function attemptName(filename: string): string {
  return `.${filename}.tmp-${nowNs()}-${process.pid}-${randomBytes(6).toString('hex')}`;
}

/** The temp name of an atomic replace-write (AMQ's `.<name>.tmp-<unixnano>`). */
export function replaceTmpName(name: string): string {
  return `.${name}.tmp-${nowNs()}`;
}

/** Leftovers of either kind, for cleanup. */
export function isTmpLeftover(name: string): boolean {
  return name.startsWith('.') && name.includes('.tmp-');
}
