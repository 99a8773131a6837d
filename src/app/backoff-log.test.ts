import { describe, expect, it } from 'vitest';
import { BackoffLog } from './backoff-log.js';

describe('BackoffLog', () => {
  it('writes the first line at once, then at most one per 1, 2, 4 … 60 s per kind, with how many were held back', () => {
    let now = 0;
    const lines: string[] = [];
    const log = new BackoffLog(
      (line) => lines.push(line),
      () => now,
    );
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5545'), { code: 'ECONNREFUSED' });
    // 2.7 errors a second for 200 s, as a worker's polling made them while PostgreSQL was down
    const at: number[] = [];
    for (now = 0; now < 200_000; now += 370) {
      const before = lines.length;
      log.error('queue', refused);
      if (lines.length > before) at.push(now);
    }
    expect(at.slice(0, 8)).toEqual([0, 1110, 3330, 7400, 15540, 31820, 64010, 124320]);
    expect(lines[0]).toBe('queue: connect ECONNREFUSED 127.0.0.1:5545');
    expect(lines[1]).toBe('queue: connect ECONNREFUSED 127.0.0.1:5545 (2 more)');
    // never more than one line a minute once backed off
    expect(at.at(-1)! - at.at(-2)!).toBeLessThanOrEqual(60_370);
    expect(at.at(-1)! - at.at(-2)!).toBeGreaterThanOrEqual(60_000);
    expect(lines.length).toBe(at.length);
    expect(lines.length).toBeLessThan(12);
  });

  it('keeps each kind of error apart, and starts a kind over after a quiet spell', () => {
    let now = 0;
    const lines: string[] = [];
    const log = new BackoffLog(
      (line) => lines.push(line),
      () => now,
    );
    log.error('queue', Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
    log.error('queue', new Error('relation "x" does not exist'));
    log.error('register', Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
    log.error('queue', Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
    expect(lines).toEqual(['queue: refused', 'queue: relation "x" does not exist', 'register: refused']);
    now = 500_000;
    log.error('queue', Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
    now = 500_100;
    log.error('queue', Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
    expect(lines.slice(3)).toEqual(['queue: refused']);
  });
});
