import { describe, expect, it } from 'vitest';
import { type DoorbellState, noticeText, ring, startDoorbell } from './doorbell.js';

const config = { firstRetryMs: 5_000, maxRetryMs: 120_000, maxRings: 6 };
const names = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => `m${String(from + i).padStart(3, '0')}.md`);

/** Runs the doorbell over a timeline of inbox listings; returns the times it rang. */
function rings(timeline: Array<[at: number, unread: string[]]>, start: string[] = []): number[] {
  let state: DoorbellState = startDoorbell(start);
  const out: number[] = [];
  for (const [at, unread] of timeline) {
    const step = ring(state, unread, at, config);
    state = step.state;
    if (step.announce) out.push(at);
  }
  return out;
}

describe('the doorbell', () => {
  it('rings once for new mail and stops when the agent reads it', () => {
    const timeline: Array<[number, string[]]> = [[0, names(1)]];
    for (let t = 1000; t <= 60_000; t += 1000) timeline.push([t, t < 2000 ? names(1) : []]);
    expect(rings(timeline)).toEqual([0]);
  });

  it('gives 50 messages in 5 s to a busy agent two rings, not fifty', () => {
    const timeline: Array<[number, string[]]> = [];
    for (let i = 1; i <= 50; i++) timeline.push([i * 100, names(i)]);
    for (let t = 5500; t <= 8000; t += 500) timeline.push([t, names(50)]);
    expect(rings(timeline)).toEqual([100, 5500]);
  });

  it('backs off, doubling to its cap, then parks until the inbox changes', () => {
    const timeline: Array<[number, string[]]> = [];
    for (let t = 0; t <= 600_000; t += 500) timeline.push([t, names(1)]);
    expect(rings(timeline)).toEqual([0, 5_000, 15_000, 35_000, 75_000, 155_000]);
    // read, then new mail: it rings again at once
    expect(rings([...timeline, [600_500, []], [601_000, names(1, 7)]]).at(-1)).toBe(601_000);
  });

  it('does not ring for mail that was there when the wake started', () => {
    expect(
      rings(
        [
          [0, names(3)],
          [1000, names(3)],
          [9000, names(3)],
        ],
        names(3),
      ),
    ).toEqual([]);
    expect(rings([[0, names(4)]], names(3))).toEqual([0]);
  });
});

describe('a notice', () => {
  it('names sender, subject and the command; urgent says so; several are summed up', () => {
    const cmd = 'troupe bus drain --me codex --include-body';
    expect(noticeText('codex', [{ from: 'claude', subject: 'Review x.ts', priority: 'normal' }], cmd)).toBe(
      'troupe: mail for codex from claude: "Review x.ts" — read with: troupe bus drain --me codex --include-body',
    );
    expect(
      noticeText('codex', [{ from: 'user', subject: 'down\n\u001b[2Jnow', priority: 'urgent' }], cmd),
    ).toBe(`troupe: URGENT mail for codex from user: "down now" — read with: ${cmd}`);
    const many = [
      { from: 'claude', subject: 'a', priority: 'normal' },
      { from: 'claude', subject: 'b', priority: 'urgent' },
      { from: 'user', subject: 'c', priority: '' },
    ];
    expect(noticeText('codex', many, cmd)).toBe(
      `troupe: 3 new messages for codex (2 from claude, 1 from user; 1 URGENT) — read with: ${cmd}`,
    );
  });
});
