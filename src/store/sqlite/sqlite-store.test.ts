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
  it('a window another process closes is seen at once, and one that reset is gone', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'troupe-store-')), 'troupe.db');
    const mine = openSqliteStore(file);
    const other = openSqliteStore(file);
    try {
      const now = new Date('2026-11-29T12:00:00Z');
      expect(mine.closedProviders(now)).toEqual([]);
      other.closeProvider('claude', '2026-11-29T12:05:00Z');
      expect(mine.closedProviders(now)).toEqual([{ provider: 'claude', resetAt: '2026-11-29T12:05:00Z' }]);
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
