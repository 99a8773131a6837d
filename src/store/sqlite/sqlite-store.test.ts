import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeContract } from '../contract.js';
import { openSqliteStore } from './sqlite-store.js';

storeContract('sqlite', () =>
  openSqliteStore(join(mkdtempSync(join(tmpdir(), 'troupe-store-')), 'troupe.db')),
);
