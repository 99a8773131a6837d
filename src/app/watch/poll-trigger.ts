/** How long a wake waits for more of its burst before the poll runs (ms). */
export const WAKE_DEBOUNCE_MS = 250;

/**
 * "Poll now", from outside the watch loop (a tracker's webhook): ends the loop's wait between
 * polls. A burst of wakes is one poll: wakes while the loop waits are gathered for
 * `debounceMs`; wakes while it polls are one more poll right after.
 */
export class PollTrigger {
  #pending = false;
  #waiter: (() => void) | null = null;
  #debounce: NodeJS.Timeout | null = null;

  constructor(private readonly debounceMs = WAKE_DEBOUNCE_MS) {}

  wake(): void {
    this.#pending = true;
    if (this.#waiter && !this.#debounce) {
      this.#debounce = setTimeout(() => {
        this.#debounce = null;
        this.#waiter?.();
      }, this.debounceMs);
    }
  }

  /**
   * Calls `done` on the next wake (at once when one came since the last wait); the function it
   * returns stops listening.
   */
  listen(done: () => void): () => void {
    if (this.#pending) {
      this.#pending = false;
      queueMicrotask(done);
      return () => {};
    }
    this.#waiter = () => {
      this.#pending = false;
      this.#waiter = null;
      done();
    };
    return () => {
      this.#waiter = null;
      if (this.#debounce) clearTimeout(this.#debounce);
      this.#debounce = null;
    };
  }
}
