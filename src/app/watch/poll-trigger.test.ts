import { describe, expect, it } from 'vitest';
import { PollTrigger } from './poll-trigger.js';

const waited = (trigger: PollTrigger) =>
  new Promise<void>((resolve) => {
    trigger.listen(resolve);
  });

describe('PollTrigger', () => {
  it('a burst of wakes while the loop waits ends the wait once', async () => {
    const trigger = new PollTrigger(20);
    let ended = 0;
    const stop = trigger.listen(() => ended++);
    for (let i = 0; i < 5; i++) trigger.wake();
    await new Promise((r) => setTimeout(r, 60));
    stop();
    expect(ended).toBe(1);
  });

  it('wakes while the loop polls are one more poll right after, not one each', async () => {
    const trigger = new PollTrigger(20);
    trigger.wake();
    trigger.wake();
    await waited(trigger);
    let ended = false;
    const stop = trigger.listen(() => {
      ended = true;
    });
    await new Promise((r) => setTimeout(r, 60));
    stop();
    expect(ended).toBe(false);
  });
});
