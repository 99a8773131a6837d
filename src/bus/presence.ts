import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseRfc3339, rfc3339Nano } from './clock.js';
import { errno, writeFileAtomic } from './durable.js';
import { goJson } from './go-json.js';
import { ensureMailbox, type Mailbox } from './layout.js';

export interface Presence {
  schema: number;
  handle: string;
  status: string;
  last_seen: string;
  note?: string;
  notifier_status?: string;
  notifier_mode?: string;
  notifier_reason?: string;
  doorbell_parked?: boolean;
  doorbell_attempts?: number;
}

const ORDER: Array<keyof Presence> = [
  'schema',
  'handle',
  'status',
  'last_seen',
  'note',
  'notifier_status',
  'notifier_mode',
  'notifier_reason',
  'doorbell_parked',
  'doorbell_attempts',
];

/** An agent counts as active when seen within this window (AMQ's `who`). */
export const ACTIVE_WINDOW_MS = 10 * 60 * 1000;

export function readPresence(box: Mailbox): Presence | undefined {
  try {
    return JSON.parse(readFileSync(box.presence, 'utf8')) as Presence;
  } catch (error) {
    if (errno(error) === 'ENOENT' || error instanceof SyntaxError) return undefined;
    throw error;
  }
}

function write(box: Mailbox, p: Presence, sync: boolean): void {
  const ordered: Record<string, unknown> = {};
  for (const key of ORDER) {
    const v = p[key];
    if (v === undefined || v === '' || v === false || (key === 'doorbell_attempts' && v === 0)) {
      if (!['schema', 'handle', 'status', 'last_seen'].includes(key)) continue;
    }
    ordered[key] = v;
  }
  ensureMailbox(box);
  writeFileAtomic(dirname(box.presence), 'presence.json', Buffer.from(`${goJson(ordered)}\n`), sync);
}

/** `presence set`: status and note; the notifier's fields (owned by a wake process) are kept. */
export function setPresence(box: Mailbox, status: string, note?: string): Presence {
  const old = readPresence(box);
  const p: Presence = { ...old, schema: 1, handle: box.handle, status, last_seen: rfc3339Nano() };
  if (note !== undefined) p.note = note;
  write(box, p, true);
  return p;
}

const touched = new Map<string, number>();

/**
 * send/reply/drain mark the agent as seen. last_seen only needs minute resolution for the
 * 10-minute active window, so a process rewrites it at most once a second, without fsync: a touch
 * lost to a power cut is harmless, a durable one would double the cost of a send.
 */
export function touchPresence(box: Mailbox): void {
  const now = Date.now();
  if (now - (touched.get(box.presence) ?? 0) < 1000) return;
  touched.set(box.presence, now);
  const old = readPresence(box);
  write(
    box,
    { ...old, schema: 1, handle: box.handle, status: old?.status || 'active', last_seen: rfc3339Nano() },
    false,
  );
}

export function isActive(p: Presence | undefined, now = Date.now()): boolean {
  const seen = p ? parseRfc3339(p.last_seen ?? '') : undefined;
  return seen !== undefined && now - Number(seen / 1_000_000n) < ACTIVE_WINDOW_MS;
}
