import { printable } from '../core/printable.js';

/**
 * When a wake rings, decided purely from the names in `inbox/new` and the time. One notice for new
 * mail; while it is unanswered, new mail only joins the next ring, and rings back off (first
 * retry, doubling to a cap) and park after a few; the moment mail the notice covered leaves
 * `new/` (the agent read it) the doorbell stops. So a busy agent is never flooded (AMQ's most
 * reported wake bug, #426): 50 messages in 5 s ring twice.
 */
export interface DoorbellConfig {
  firstRetryMs: number;
  maxRetryMs: number;
  /** Rings for one unanswered notice, the first included, before the doorbell parks. */
  maxRings: number;
}

export const DEFAULT_DOORBELL: DoorbellConfig = { firstRetryMs: 5_000, maxRetryMs: 120_000, maxRings: 6 };

export interface DoorbellState {
  /** Unread names already announced, or there when the wake started (a baseline, as AMQ's wake). */
  known: Set<string>;
  /** The unanswered notice: what was unread when it rang, and when to ring again. */
  outstanding?: { covered: Set<string>; rings: number; nextAt: number };
  parked: boolean;
}

export function startDoorbell(unread: string[]): DoorbellState {
  return { known: new Set(unread), parked: false };
}

/** One look at the inbox: the new state and, when it should ring, the unread names to announce. */
export function ring(
  state: DoorbellState,
  unread: string[],
  now: number,
  config: DoorbellConfig = DEFAULT_DOORBELL,
): { state: DoorbellState; announce?: string[] } {
  const present = new Set(unread);
  let outstanding = state.outstanding;
  let parked = state.parked;
  if (outstanding && [...outstanding.covered].some((name) => !present.has(name))) {
    outstanding = undefined;
    parked = false;
  }
  const fresh = unread.filter((name) => !state.known.has(name));
  // forget what was read, so mail redelivered under the same name counts as new again
  const known = new Set([...state.known].filter((name) => present.has(name)).concat(fresh));
  if (unread.length === 0) return { state: { known, parked: false } };
  if (!outstanding) {
    if (fresh.length === 0) return { state: { known, parked } };
    return {
      state: {
        known,
        parked: false,
        outstanding: { covered: present, rings: 1, nextAt: now + config.firstRetryMs },
      },
      announce: fresh,
    };
  }
  if (parked || now < outstanding.nextAt) return { state: { known, parked, outstanding } };
  const rings = outstanding.rings + 1;
  if (rings > config.maxRings) return { state: { known, parked: true, outstanding } };
  const delay = Math.min(config.firstRetryMs * 2 ** (rings - 1), config.maxRetryMs);
  return {
    state: { known, parked, outstanding: { covered: present, rings, nextAt: now + delay } },
    announce: unread,
  };
}

export interface NoticeItem {
  from: string;
  subject: string;
  priority: string;
}

/** One line for the agent's terminal: who wrote, about what, and the command that reads it. */
export function noticeText(me: string, items: NoticeItem[], readCommand: string): string {
  const urgent = items.filter((i) => i.priority === 'urgent').length;
  if (items.length === 1) {
    const [m] = items as [NoticeItem];
    const subject = m.subject ? `: "${clean(m.subject)}"` : '';
    return `troupe: ${urgent ? 'URGENT ' : ''}mail for ${me} from ${m.from}${subject} — read with: ${readCommand}`;
  }
  const bySender = new Map<string, number>();
  for (const i of items) bySender.set(i.from, (bySender.get(i.from) ?? 0) + 1);
  const senders = [...bySender].map(([from, n]) => `${n} from ${from}`).join(', ');
  return `troupe: ${items.length} new messages for ${me} (${senders}${urgent ? `; ${urgent} URGENT` : ''}) — read with: ${readCommand}`;
}

/** A subject from another process, made safe to type: one line, no control characters, short. */
function clean(text: string): string {
  const one = printable(text);
  return one.length > 80 ? `${one.slice(0, 79)}…` : one;
}
