import type { EventStore } from '../core/event-store.js';
import { openPostgresStore } from './postgres/postgres-store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { StoreLocation } from './store-url.js';

/** The store at a location (pg itself is loaded only in the PostgreSQL store's worker thread). */
export function openStore(location: StoreLocation): EventStore {
  return location.kind === 'postgres'
    ? openPostgresStore(location.url, {
        schema: location.schema,
        ...(location.leaseSeconds ? { leaseMs: location.leaseSeconds * 1000 } : {}),
      })
    : openSqliteStore(location.file);
}
