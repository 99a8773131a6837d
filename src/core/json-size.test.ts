import { describe, expect, it } from 'vitest';
import { memoryWorld } from '../app/test-doubles.js';
import { agent, pipeline } from '../engine/test-pipelines.js';
import { TooLargeError } from './errors.js';
import { MAX_TASK_DEFINITION_BYTES } from './input-limit.js';
import { jsonBytesOver } from './json-size.js';

describe('the size of a value as JSON, without writing it', () => {
  it('agrees with JSON.stringify on values with nothing to escape', () => {
    const value = { a: [1, 'two', null, true, { b: 'é', c: [] }], d: {}, e: 'x'.repeat(100) };
    const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
    expect(jsonBytesOver(value, bytes)).toBe(false);
    expect(jsonBytesOver(value, bytes - 1)).toBe(true);
  });

  it('stops at the limit: one large string shared a million times is walked only as far as the limit', () => {
    const shared = { text: 'A'.repeat(1000) };
    expect(jsonBytesOver(Array(1_000_000).fill(shared), 10_000)).toBe(true);
  });
});

describe('what a task stores (red team M3, second line)', () => {
  it('refuses a pipeline whose JSON is over 16 MiB before the task is created', () => {
    const world = memoryWorld();
    // what YAML aliases make: the same prompt object in many agents, small in memory, huge as JSON
    const prompt = 'P'.repeat(1024 * 1024);
    const big = pipeline(...Array.from({ length: 17 }, (_, i) => agent(`a${i}`, { system_prompt: prompt })));
    const start = () =>
      world.service.start({ pipeline: big, input: 'go', script: { agents: {}, gates: {}, human: {} } });
    expect(start).toThrow(TooLargeError);
    expect(start).toThrow('pipeline test is over the 16 MiB a task may store');
    expect(world.store.tasks()).toEqual([]);
    expect(MAX_TASK_DEFINITION_BYTES).toBe(16 * 1024 * 1024);

    const fits = pipeline(...Array.from({ length: 15 }, (_, i) => agent(`a${i}`, { system_prompt: prompt })));
    world.service.start({ pipeline: fits, input: 'go', script: { agents: {}, gates: {}, human: {} } });
    expect(world.store.tasks()).toHaveLength(1);
  });
});
