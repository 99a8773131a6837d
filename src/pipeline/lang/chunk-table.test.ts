import { describe, expect, it } from 'vitest';
import type { Chunk } from '../../core/chunk.js';
import { formatChunkTable } from './chunk-table.js';

const AT = '2026-03-27T10:00:00+00:00';

function chunk(id: string, status: Chunk['status'], description = `work ${id}`): Chunk {
  return {
    id,
    description,
    status,
    created_by: 'config',
    completed_by: status === 'done' ? 'dev' : null,
    created_at: AT,
    updated_at: AT,
  };
}

describe('formatChunkTable', () => {
  it("renders aqm's table with status marks, escaped pipes and the progress footer", () => {
    const table = formatChunkTable([
      chunk('C-001', 'done'),
      chunk('C-002', 'in_progress', 'parse a | b'),
      chunk('C-003', 'pending'),
    ]);
    expect(table).toBe(
      [
        '| ID | Status | Description |',
        '|---|---|---|',
        '| C-001 | ✅ done | work C-001 |',
        '| C-002 | 🔄 in_progress | parse a \\| b |',
        '| C-003 | ⬜ pending | work C-003 |',
        '',
        '**Progress: 1/3 done, 2 remaining**',
      ].join('\n'),
    );
  });

  it('says so when there are no chunks', () => {
    expect(formatChunkTable([])).toBe('(no chunks defined)');
  });
});
