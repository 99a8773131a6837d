import type { EventStore } from '../core/event-store.js';
import { openPostgresStore } from './postgres/postgres-store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { StoreLocation } from './store-url.js';

export interface OpenStoreOptions {
  /** Open only a store that is already there: nothing is created or migrated (a NotFoundError instead). */
  existing?: boolean;
}

/** The store at a location (pg itself is loaded only in the PostgreSQL store's worker thread). */
export function openStore(location: StoreLocation, options: OpenStoreOptions = {}): EventStore {
  const existing = options.existing === true;
  return location.kind === 'postgres'
    ? openPostgresStore(location.url, {
        schema: location.schema,
        existing,
        ...(location.leaseSeconds ? { leaseMs: location.leaseSeconds * 1000 } : {}),
      })
    : openSqliteStore(location.file, { existing });
}
