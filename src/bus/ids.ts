import { randomFillSync } from 'node:crypto';
import { idStamp, nowNs } from './clock.js';

// Random hex for names, cut from a pool filled 4 KiB at a time: a randomBytes call for a few
// bytes costs more than the rest of making a message id.
const pool = Buffer.alloc(4096);
let used = pool.length;

function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += bytes;
  return pool.toString('hex', used - bytes, used);
}

/** `2026-08-22T11-12-13.123Z_pid4242_9f3a01bc`: sorts chronologically, unique across processes. */
export function newMessageId(ns: bigint = nowNs()): string {
  return `${idStamp(ns)}_pid${process.pid}_${randomHex(4)}`;
}

export function newDlqId(): string {
  return `dlq_${nowNs()}_${process.pid}_${randomHex(6)}`;
}

/** A delivery attempt's name in `tmp/`: hidden, unique, so a leftover never blocks a retry. */
export function attemptName(filename: string): string {
  return `.${filename}.tmp-${nowNs()}-${process.pid}-${randomHex(6)}`;
}

/** The temp name of an atomic replace-write (AMQ's `.<name>.tmp-<unixnano>`). */
export function replaceTmpName(name: string): string {
  return `.${name}.tmp-${nowNs()}`;
}

/** Leftovers of either kind, for cleanup. */
export function isTmpLeftover(name: string): boolean {
  return name.startsWith('.') && name.includes('.tmp-');
}
