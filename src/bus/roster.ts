import { HUMAN } from './handle.js';
import { mailNames } from './inbox.js';
import { mailbox, mailboxHandles } from './layout.js';
import { isActive, readPresence } from './presence.js';
import { type LockState, lockState, readWakeLock } from './wake-lock.js';

/**
 * `active`: a running `troupe wake` holds its lock, or it was seen within the last 10 minutes
 * (`bus who`'s rule), unless its status says otherwise; `idle`: seen, but its status is `idle`
 * or `away`; `offline`: neither, or its status is `offline`.
 */
export type PresenceState = 'active' | 'idle' | 'offline';

export interface RosterEntry {
  handle: string;
  kind: 'agent' | 'human';
  presence: PresenceState;
  /** The status it set (`bus presence set`), or what a send or drain stamped (`active`). */
  status: string;
  note?: string;
  last_seen?: string;
  /** Its `troupe wake` lock: `running`, `stale` (owner gone), `unverified` (another host). */
  wake?: LockState;
  /** Unread (`inbox/new`) and read (`inbox/cur`) messages. */
  backlog: { new: number; cur: number };
}

const RESTING = new Set(['idle', 'away']);

/** Every mailbox of one root (a base root or a session), with its presence, wake and backlog. */
export function roster(root: string, now = Date.now()): RosterEntry[] {
  return mailboxHandles(root).map((handle): RosterEntry => {
    const box = mailbox(root, handle);
    const p = readPresence(box);
    const lock = readWakeLock(box);
    const wake = lock ? lockState(lock) : undefined;
    const status = p?.status ?? '';
    const seen = wake === 'running' || isActive(p, now);
    const presence: PresenceState =
      !seen || status === 'offline' ? 'offline' : RESTING.has(status) ? 'idle' : 'active';
    return {
      handle,
      kind: handle === HUMAN ? 'human' : 'agent',
      presence,
      status,
      ...(p?.note ? { note: p.note } : {}),
      ...(p?.last_seen ? { last_seen: p.last_seen } : {}),
      ...(wake ? { wake } : {}),
      backlog: { new: mailNames(box.inboxNew).length, cur: mailNames(box.inboxCur).length },
    };
  });
}
