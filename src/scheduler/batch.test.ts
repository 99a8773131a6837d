import { describe, expect, it } from 'vitest';
import { type BatchSpec, parseBatch, runBatch } from './batch.js';

const spec = (id: string, depends_on: string[] = []): BatchSpec => ({
  id,
  input: id,
  depends_on,
  agent: null,
  labels: [],
  tier: null,
  size: null,
});

describe('parseBatch', () => {
  it('reads a list or {tasks}, numbering tasks without ids', () => {
    expect(
      parseBatch([{ input: 'a' }, { id: 'b', input: 'b', depends_on: ['1'] }], 't.json').map((s) => [
        s.id,
        s.depends_on,
      ]),
    ).toEqual([
      ['1', []],
      ['b', ['1']],
    ]);
    expect(parseBatch({ tasks: [{ input: 'x' }] }, 't.json')).toHaveLength(1);
  });

  it('refuses the whole batch when one input is over the task input limit, before any starts', () => {
    const big = 'x'.repeat(256 * 1024 + 1);
    expect(() => parseBatch([{ input: 'a' }, { input: big }], 't.json')).toThrow(
      expect.objectContaining({
        code: 'too_large',
        message: 't.json: task 2: the input is 262145 bytes, over the 256 KiB limit',
      }),
    );
  });

  it('refuses duplicates, unknown dependencies and cycles with one clear line', () => {
    expect(() =>
      parseBatch(
        [
          { id: 'a', input: 'x' },
          { id: 'a', input: 'y' },
        ],
        't.json',
      ),
    ).toThrow('two tasks are called a');
    expect(() => parseBatch([{ id: 'a', input: 'x', depends_on: ['z'] }], 't.json')).toThrow(
      'a depends on z',
    );
    expect(() =>
      parseBatch(
        [
          { id: 'a', input: 'x', depends_on: ['b'] },
          { id: 'b', input: 'y', depends_on: ['a'] },
        ],
        't.json',
      ),
    ).toThrow('the dependencies go round: a → b → a');
    expect(() => parseBatch([], 't.json')).toThrow('expected a list');
  });
});

describe('runBatch', () => {
  it('runs independent tasks at the same time, up to the cap, and dependents after what they need', async () => {
    let now = 0;
    let peak = 0;
    const log: string[] = [];
    const results = await runBatch([spec('a'), spec('b'), spec('c'), spec('d', ['a', 'b'])], 2, async (s) => {
      now++;
      peak = Math.max(peak, now);
      log.push(`start ${s.id}`);
      await new Promise((r) => setTimeout(r, 5));
      now--;
      log.push(`end ${s.id}`);
      return { task: `T-${s.id}`, status: 'completed', reason: null };
    });
    expect(peak).toBe(2);
    expect(results.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
    expect(log.indexOf('start d')).toBeGreaterThan(Math.max(log.indexOf('end a'), log.indexOf('end b')));
  });

  it('skips a task whose dependency did not complete', async () => {
    const results = await runBatch([spec('a'), spec('b', ['a']), spec('c', ['b'])], 4, async (s) => ({
      task: `T-${s.id}`,
      status: s.id === 'a' ? 'failed' : 'completed',
      reason: null,
    }));
    expect(results.map((r) => [r.id, r.status])).toEqual([
      ['a', 'failed'],
      ['b', 'skipped'],
      ['c', 'skipped'],
    ]);
  });
});
