import type { EventStore } from '../core/event-store.js';
import type { StoredEvent } from '../core/events.js';

/**
 * The server's view of the event log: one reader for all clients. It reads new events when the
 * store says another process appended some (PostgreSQL's LISTEN/NOTIFY, `onAppended`), or else
 * every `pollMs` (SQLite: e.g. `troupe run` in another shell), and at once when this process
 * appends (`poke`); it keeps the latest `ringSize` in memory, and wakes the streams waiting on
 * it. A stream that is behind the ring (a replay from an old `Last-Event-ID`) reads the store
 * directly; either way it follows the global `seq`, which both stores commit in order, so nothing
 * is missed or repeated.
 */
export class EventHub {
  #cursor: number;
  #ring: StoredEvent[] = [];
  /** Every event with seq > ringBase is in the ring. */
  #ringBase: number;
  #waiters = new Set<(woke: boolean) => void>();
  #timer: NodeJS.Timeout | null = null;
  #unsubscribe: (() => void) | null = null;
  #closed = false;
  #pokeQueued = false;

  constructor(
    private readonly store: EventStore,
    private readonly options: { pollMs?: number; ringSize?: number } = {},
  ) {
    this.#cursor = lastSeq(store);
    this.#ringBase = this.#cursor;
  }

  get cursor(): number {
    return this.#cursor;
  }

  /** Streams waiting for the next events right now. */
  get waiting(): number {
    return this.#waiters.size;
  }

  get closed(): boolean {
    return this.#closed;
  }

  start(): this {
    if (this.#timer || this.#unsubscribe) return this;
    if (this.store.onAppended) {
      // a notification for events already read (this process's own, poked) is passed over
      this.#unsubscribe = this.store.onAppended((seq) => {
        if (seq === null || seq > this.#cursor) this.poke();
      });
      // what was appended before the store listened
      this.tick();
      return this;
    }
    this.#timer = setInterval(() => this.tick(), this.options.pollMs ?? 50);
    this.#timer.unref();
    return this;
  }

  /** This process appended: read it now rather than at the next poll. */
  poke(): void {
    if (this.#pokeQueued) return;
    this.#pokeQueued = true;
    queueMicrotask(() => {
      this.#pokeQueued = false;
      this.tick();
    });
  }

  tick(): void {
    if (this.#closed) return;
    let fresh = false;
    for (;;) {
      const batch = this.store.eventsSince(this.#cursor, 1000);
      if (batch.length === 0) break;
      this.#ring.push(...batch);
      this.#cursor = batch.at(-1)!.seq;
      fresh = true;
    }
    const excess = this.#ring.length - (this.options.ringSize ?? 5000);
    if (excess > 0) {
      this.#ringBase = this.#ring[excess - 1]!.seq;
      this.#ring.splice(0, excess);
    }
    if (fresh) this.#wakeAll(true);
  }

  /**
   * The events after `after` (of one task, or all), and the cursor to read from next time.
   * At most about `limit` events when read from the store.
   */
  read(after: number, taskId: string | null, limit = 500): { events: StoredEvent[]; cursor: number } {
    if (after >= this.#ringBase) {
      const start = firstAfter(this.#ring, after);
      const slice = this.#ring.slice(start);
      return {
        events: taskId ? slice.filter((e) => e.taskId === taskId) : slice,
        cursor: Math.max(after, this.#cursor),
      };
    }
    const seenUpTo = this.#cursor;
    const events: StoredEvent[] = [];
    if (taskId) {
      for (const event of this.store.events(taskId, after)) {
        events.push(event);
        if (events.length >= limit) break;
      }
    } else {
      events.push(...this.store.eventsSince(after, limit));
    }
    const last = events.at(-1)?.seq ?? after;
    return { events, cursor: events.length >= limit ? last : Math.max(last, seenUpTo) };
  }

  /** Resolves true when new events arrive, false after `timeoutMs` or when the hub closes. */
  next(timeoutMs: number): { promise: Promise<boolean>; cancel: () => void } {
    let done!: (woke: boolean) => void;
    const promise = new Promise<boolean>((resolve) => {
      done = resolve;
    });
    if (this.#closed) {
      done(false);
      return { promise, cancel: () => {} };
    }
    const timer = setTimeout(() => finish(false), timeoutMs);
    const finish = (woke: boolean) => {
      clearTimeout(timer);
      this.#waiters.delete(finish);
      done(woke);
    };
    this.#waiters.add(finish);
    return { promise, cancel: () => finish(false) };
  }

  close(): void {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    this.#wakeAll(false);
  }

  #wakeAll(woke: boolean): void {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake(woke);
  }
}

function firstAfter(events: StoredEvent[], seq: number): number {
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (events[mid]!.seq <= seq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The highest seq in the store, found with O(log n) indexed look-ups (the store has no max()). */
export function lastSeq(store: EventStore): number {
  const anyAfter = (seq: number) => store.eventsSince(seq, 1).length > 0;
  let hi = 1;
  while (anyAfter(hi)) hi *= 2;
  // the answer is the smallest x in [0, hi] with no event after it
  let lo = 0;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (anyAfter(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
