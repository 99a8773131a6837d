import { describe, expect, it } from 'vitest';
import { initialChunks, nextChunkId } from './chunk.js';
import type { Pipeline } from './pipeline.js';

describe('nextChunkId', () => {
  it('starts at C-001', () => {
    expect(nextChunkId([])).toBe('C-001');
  });

  it('takes the first free number, reusing gaps', () => {
    expect(nextChunkId([{ id: 'C-001' }, { id: 'C-002' }])).toBe('C-003');
    expect(nextChunkId([{ id: 'C-001' }, { id: 'C-003' }])).toBe('C-002');
  });

  it('grows past three digits', () => {
    const ids = Array.from({ length: 999 }, (_, i) => ({ id: `C-${String(i + 1).padStart(3, '0')}` }));
    expect(nextChunkId(ids)).toBe('C-1000');
  });
});

describe('initialChunks', () => {
  it("numbers every node's chunks.initial in pipeline order, created by config", () => {
    const pipeline = {
      agents: [{ chunks: { initial: ['a', 'b'] } }, { chunks: null }, { chunks: { initial: ['c'] } }],
    } as unknown as Pipeline;
    const chunks = initialChunks(pipeline, 'T');
    expect(chunks.map((c) => [c.id, c.description, c.created_by, c.status])).toEqual([
      ['C-001', 'a', 'config', 'pending'],
      ['C-002', 'b', 'config', 'pending'],
      ['C-003', 'c', 'config', 'pending'],
    ]);
  });
});
