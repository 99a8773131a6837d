import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../core/events.js';
import { agent, Log, pipeline } from '../engine/test-pipelines.js';
import { liveOutput } from './live-output.js';

/** A terminal (or a pipe) that keeps what is written to it. */
function screen(isTTY: boolean) {
  const written: string[] = [];
  const stream = { isTTY, write: (text: string) => written.push(text) > 0 };
  return { stream: stream as unknown as NodeJS.WriteStream, written };
}

const at = '2026-11-29T12:00:00.000Z';
// a task's state as the fold makes it (the live output reads its stages, activations and plan)
const state = new Log(pipeline(agent('writer'))).state;
const limited = (resetAt: string): StoredEvent => ({
  type: 'rate_limited',
  stage: 1,
  activation: 'a1',
  agent: 'writer',
  provider: 'claude',
  resetAt,
  message: 'limit',
  seq: 2,
  taskId: 'T-1',
  at,
});
const started: StoredEvent = {
  type: 'stage_started',
  stage: 1,
  activation: 'a1',
  agent: 'writer',
  input: 'x',
  attempt: 1,
  seq: 3,
  taskId: 'T-1',
  at,
};

describe('liveOutput', () => {
  it('counts down to the reset on a terminal, and wipes the countdown when the stage runs again', async () => {
    const { stream, written } = screen(true);
    const out = liveOutput(stream);
    out.onEvent?.(limited(new Date(Date.now() + 5_000).toISOString()), state);
    await new Promise((resolve) => setTimeout(resolve, 1_800));
    const ticks = written.filter((w) => w.includes('claude reopens in'));
    expect(ticks.length).toBeGreaterThanOrEqual(2);
    expect(ticks[0]).toMatch(/^\r\x1b\[2K.*reopens in \d\.\ds/);
    out.onEvent?.(started, state);
    const cleared = written.length;
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(written.length).toBe(cleared); // no tick after the stage started again
    expect(written.at(-2)).toBe('\r\x1b[2K');
    expect(written.at(-1)).toContain('▶ [1] writer');
  });

  it('prints one line and no countdown when output is piped', async () => {
    const { stream, written } = screen(false);
    liveOutput(stream).onEvent?.(limited(new Date(Date.now() + 3_000).toISOString()), state);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(
      /claude is limited; waiting until .* UTC \(in \d\.\ds\), then it carries on\n$/,
    );
  });
});
