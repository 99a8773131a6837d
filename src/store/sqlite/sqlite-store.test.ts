import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { storeContract } from '../contract.js';
import { openSqliteStore } from './sqlite-store.js';

storeContract('sqlite', () =>
  openSqliteStore(join(mkdtempSync(join(tmpdir(), 'troupe-store-')), 'troupe.db')),
);

describe('sqlite store: provider windows across connections', () => {
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

  it('a window another process closes is seen at the next turn of the event loop, and one that reset is gone', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'troupe-store-')), 'troupe.db');
    const mine = openSqliteStore(file);
    const other = openSqliteStore(file);
    try {
      const now = new Date('2026-11-29T12:00:00Z');
      expect(mine.closedProviders(now)).toEqual([]);
      other.closeProvider('claude', '2026-11-29T12:05:00Z');
      // within one turn (no await: no other task of this process ran) the answer is the one just read
      expect(mine.closedProviders(now)).toEqual([]);
      await nextTurn();
      expect(mine.closedProviders(now)).toEqual([{ provider: 'claude', resetAt: '2026-11-29T12:05:00Z' }]);
      // a window this connection closes is seen at once
      mine.closeProvider('gemini', '2026-11-29T12:01:00Z');
      expect(mine.closedProviders(now).map((w) => w.provider)).toEqual(['claude', 'gemini']);
      expect(other.closedProviders(now).map((w) => w.provider)).toEqual(['claude', 'gemini']);
      expect(mine.closedProviders(new Date('2026-11-29T12:02:00Z')).map((w) => w.provider)).toEqual([
        'claude',
      ]);
    } finally {
      mine.close();
      other.close();
    }
  });
});
