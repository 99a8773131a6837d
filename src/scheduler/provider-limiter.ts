import type { ProviderLimit } from '../core/routing.js';

/**
 * `limits:` in config: at most `concurrency` calls to a provider at once and at most
 * `requests_per_minute` started in any 60 s, for every task this process runs. A call waits its
 * turn (first come, first served); an aborted wait gives its place up. The caps are set per
 * runtime and counted per provider key (core/provider-key.ts), as rate limits are: a cap keeps
 * one endpoint or account under its own limits, so Ollama's and OpenAI's calls, or two accounts',
 * do not queue behind each other.
 */

export type Release = () => void;

export const noRelease: Release = () => {};

interface Waiter {
  resolve: (release: Release) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

class ProviderQueue {
  private running = 0;
  /** When recent calls started (ms), for the per-minute cap. */
  private readonly starts: number[] = [];
  private readonly waiting: Waiter[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly limit: ProviderLimit,
    private readonly now: () => number,
    private readonly windowMs = 60_000,
  ) {}

  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          this.waiting.splice(this.waiting.indexOf(waiter), 1);
          reject(signal!.reason);
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiting.push(waiter);
      this.pump();
    });
  }

  /** Starts as many waiting calls as the caps allow; wakes itself when the minute frees a slot. */
  private pump(): void {
    while (this.waiting.length > 0) {
      if (this.limit.concurrency !== null && this.running >= this.limit.concurrency) return;
      const wait = this.rateWait();
      if (wait > 0) {
        if (!this.timer) {
          this.timer = setTimeout(() => {
            this.timer = null;
            this.pump();
          }, wait);
        }
        return;
      }
      const waiter = this.waiting.shift()!;
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      this.running++;
      this.starts.push(this.now());
      let released = false;
      waiter.resolve(() => {
        if (released) return;
        released = true;
        this.running--;
        this.pump();
      });
    }
  }

  /** ms until another call may start under the per-minute cap (0: now). */
  private rateWait(): number {
    const rpm = this.limit.requests_per_minute;
    if (rpm === null) return 0;
    const now = this.now();
    while (this.starts.length > 0 && this.starts[0]! <= now - this.windowMs) this.starts.shift();
    // a fractional cap (0.5 a minute) spaces calls evenly instead
    const allowed = Math.max(1, Math.floor(rpm));
    const spacing = rpm < 1 ? this.windowMs / rpm : 0;
    const last = this.starts.at(-1);
    if (spacing > 0 && last !== undefined) return Math.max(0, last + spacing - now);
    if (this.starts.length < allowed) return 0;
    return this.starts[this.starts.length - allowed]! + this.windowMs - now;
  }
}

/** Turns with providers under `limits:`: this process's (ProviderLimiter) or every worker's (store/queue/shared-limits.ts). */
export interface ProviderTurns {
  acquire(runtime: string, provider: string, signal?: AbortSignal): Release | Promise<Release>;
}

export class ProviderLimiter implements ProviderTurns {
  private readonly queues = new Map<string, ProviderQueue>();

  constructor(
    private readonly limits: Readonly<Record<string, ProviderLimit>>,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A turn with `provider` (a key of `runtime`): at once (not a promise) when the runtime has no
   * caps, else once one is free. The release must be called when the call ends.
   */
  acquire(runtime: string, provider: string, signal?: AbortSignal): Release | Promise<Release> {
    const limit = this.limits[runtime];
    if (!limit || (limit.concurrency === null && limit.requests_per_minute === null)) return noRelease;
    let queue = this.queues.get(provider);
    if (!queue) {
      queue = new ProviderQueue(limit, this.now);
      this.queues.set(provider, queue);
    }
    return queue.acquire(signal);
  }
}
