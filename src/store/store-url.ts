import { isAbsolute, join } from 'node:path';
import { StoreConfigError } from '../core/errors.js';

/** Where a project's events live: a SQLite file, or a PostgreSQL database (and schema in it). */
export type StoreLocation =
  | { kind: 'sqlite'; file: string }
  | {
      kind: 'postgres';
      url: string;
      schema: string | null;
      /** `?lease_seconds=`: how long this process's leases last unrenewed (default 30). */
      leaseSeconds?: number;
    };

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * A store URL with its password replaced by `***`: the one form in which a store URL is ever
 * printed, logged, put in an error or answered by the API.
 */
export function redactStoreUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    // not a URL the parser takes: anything between `//user:` and the last `@` is the password
    return url.replace(/(\/\/[^/:@]*:)[^/]*@/, '$1***@');
  }
}

/**
 * `postgres://` or `postgresql://` picks PostgreSQL (`?schema=name` for a schema of its own, as
 * tests and several projects on one database use; `?lease_seconds=N` for this process's leases);
 * anything else without a scheme is a SQLite
 * file, relative to the project root.
 */
export function parseStoreLocation(value: string, root: string): StoreLocation {
  if (/^postgres(ql)?:\/\//i.test(value)) {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new StoreConfigError(`store ${redactStoreUrl(value)} is not a valid URL`);
    }
    const schema = url.searchParams.get('schema');
    if (schema !== null && !SCHEMA_NAME.test(schema))
      throw new StoreConfigError(
        `store ${redactStoreUrl(value)}: schema '${schema}' is not a plain lower-case SQL name`,
      );
    url.searchParams.delete('schema');
    const lease = url.searchParams.get('lease_seconds');
    if (lease !== null && !(/^\d+$/.test(lease) && Number(lease) >= 1))
      throw new StoreConfigError(
        `store ${redactStoreUrl(value)}: lease_seconds '${lease}' is not a whole number of seconds, 1 or more`,
      );
    url.searchParams.delete('lease_seconds');
    return {
      kind: 'postgres',
      url: url.toString(),
      schema,
      ...(lease ? { leaseSeconds: Number(lease) } : {}),
    };
  }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(value);
  if (scheme)
    throw new StoreConfigError(`store ${redactStoreUrl(value)}: '${scheme[1]}' is not a store troupe knows`, {
      hint: 'use postgres://user@host/db for PostgreSQL, or a file path for SQLite',
    });
  return { kind: 'sqlite', file: isAbsolute(value) ? value : join(root, value) };
}

/** A store location as people are shown it: a SQLite file's path, a PostgreSQL URL without its password. */
export function describeStore(location: StoreLocation): string {
  if (location.kind === 'sqlite') return location.file;
  return `${redactStoreUrl(location.url)}${location.schema ? ` (schema ${location.schema})` : ''}`;
}
