import { describe, expect, it, vi } from 'vitest';
import { limitResetTime, sleepUntil } from './run-support.js';

describe('limitResetTime', () => {
  const now = new Date('2026-11-29T12:00:00Z');
  const inMs = (ms: number) => new Date(now.getTime() + ms);

  it("waits for the provider's own reset when it is ahead, even days ahead", () => {
    expect(limitResetTime(inMs(90_000), 0, now)).toEqual(inMs(90_000));
    expect(limitResetTime(inMs(3 * 24 * 3600_000), 5, now)).toEqual(inMs(3 * 24 * 3600_000));
  });

  it('backs off from 30 s, doubling per limit met, up to 30 min, when the reset is past or unknown', () => {
    expect(limitResetTime(new Date('2026-11-29T11:00:00Z'), 0, now)).toEqual(inMs(30_000));
    expect(limitResetTime(now, 0, now)).toEqual(inMs(30_000));
    expect(
      [0, 1, 2, 3, 5, 6, 20].map((n) => limitResetTime(undefined, n, now).getTime() - now.getTime()),
    ).toEqual([30_000, 60_000, 120_000, 240_000, 960_000, 1_800_000, 1_800_000]);
  });
});

describe('sleepUntil', () => {
  it('does not wake before the wall clock reaches its time, though its timer fires early', async () => {
    // timers faked, the clock real: the timer's firing runs a minute ahead of Date.now()
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let woke = false;
      const until = new Date(Date.now() + 60_000).toISOString();
      void sleepUntil(until, new AbortController().signal).then(() => {
        woke = true;
      });
      vi.advanceTimersByTime(60_000);
      await Promise.resolve();
      expect(woke).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });

  it('is aborted by its signal', async () => {
    const stop = new AbortController();
    const sleeping = sleepUntil(new Date(Date.now() + 60_000).toISOString(), stop.signal);
    stop.abort(new Error('stopped'));
    await expect(sleeping).rejects.toThrow('stopped');
  });
});
