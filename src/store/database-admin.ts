import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { LATEST_VERSION, migrate, migrationStatus, recordedVersion } from './postgres/migrations.js';
import { connectPostgres, type PgClient, storeError, storePlace } from './postgres/postgres-store.js';
import { openSqliteStore, SQLITE_SCHEMA_VERSION } from './sqlite/sqlite-store.js';
import { redactStoreUrl, type StoreLocation } from './store-url.js';

/** What `troupe db status` reports: where the store is and which schema version it is at. */
export type DatabaseStatus =
  | {
      kind: 'postgres';
      /** Without its password. */
      url: string;
      schema: string | null;
      /** What this process talks to it through: libpq, or pg in a worker thread (docs/distributed.md). */
      client: PgClient;
      migrations: Array<{ version: number; name: string; appliedAt: string | null }>;
      pending: number[];
      /** The highest version recorded in the schema (0: not created yet). */
      version: number;
      /** The last version this troupe knows: a `version` past it was migrated by a newer troupe, which this one refuses. */
      known: number;
    }
  | {
      kind: 'sqlite';
      path: string;
      exists: boolean;
      userVersion: number | null;
      /** The last user_version this troupe knows (the SQLite store migrates itself on open). */
      known: number;
    };

/** The store's schema version, read without changing anything. */
export function databaseStatus(location: StoreLocation): DatabaseStatus {
  if (location.kind === 'sqlite') {
    if (!existsSync(location.file))
      return {
        kind: 'sqlite',
        path: location.file,
        exists: false,
        userVersion: null,
        known: SQLITE_SCHEMA_VERSION,
      };
    const db = new Database(location.file, { readonly: true });
    try {
      const userVersion = db.pragma('user_version', { simple: true }) as number;
      return { kind: 'sqlite', path: location.file, exists: true, userVersion, known: SQLITE_SCHEMA_VERSION };
    } finally {
      db.close();
    }
  }
  return withPostgres(location, (db) => {
    const migrations = migrationStatus(db);
    return {
      kind: 'postgres',
      url: redactStoreUrl(location.url),
      schema: location.schema,
      client: db.client,
      migrations,
      pending: migrations.filter((m) => m.appliedAt === null).map((m) => m.version),
      version: recordedVersion(db),
      known: LATEST_VERSION,
    };
  });
}

/** Brings the store up to this troupe's schema; returns the versions applied now (none: it was). */
export function migrateDatabase(location: StoreLocation): number[] {
  if (location.kind === 'sqlite') {
    // SQLite migrates itself on open (sqlite-store.ts)
    openSqliteStore(location.file).close();
    return [];
  }
  return withPostgres(location, (db) =>
    migrate(db, location.schema, storePlace(location.url, location.schema)),
  );
}

function withPostgres<T>(
  location: Extract<StoreLocation, { kind: 'postgres' }>,
  body: (db: ReturnType<typeof connectPostgres>) => T,
): T {
  const db = connectPostgres(location.url, { schema: location.schema });
  try {
    return body(db);
  } catch (error) {
    throw storeError(error, location.url);
  } finally {
    db.close();
  }
}
