import { createHash } from 'node:crypto';
import { parseStoreLocation } from '../store-url.js';

/**
 * One project's queue, apart from other projects' on the same database: the `?schema=` of the
 * queue's URL names it (by default the store's schema, app/queue-config.ts). pg-boss's tables go
 * in `pgboss_<schema>`, the wake-up channel is `troupe_wake_<schema>`, and the workers and
 * provider turns are tables in `<schema>` itself. Without a schema: `pgboss`, `troupe_wake` and
 * the connection's default schema, as before namespaces existed. See docs/distributed.md.
 */
export interface QueueLocation {
  /** The connection string, without `?schema=`. */
  url: string;
  schema: string | null;
}

export function queueLocation(url: string): QueueLocation {
  if (!/^postgres(ql)?:\/\//i.test(url)) return { url, schema: null };
  const parsed = parseStoreLocation(url, '/');
  return parsed.kind === 'postgres' ? { url: parsed.url, schema: parsed.schema } : { url, schema: null };
}

/** The URL naming `schema` unless it names one already (or is not a URL troupe can read). */
export function withDefaultSchema(url: string, schema: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.searchParams.has('schema')) return url;
    parsed.searchParams.set('schema', schema);
    return parsed.toString();
  } catch {
    return url;
  }
}

/**
 * `<base>_<schema>`, or `base` alone without a schema. pg-boss takes schema names of at most 50
 * characters (PostgreSQL's channels 63): a longer one is told by its hash instead.
 */
export function namespaced(base: string, schema: string | null): string {
  if (schema === null) return base;
  const name = `${base}_${schema}`;
  return name.length <= 50 ? name : `${base}_${createHash('md5').update(schema).digest('hex').slice(0, 16)}`;
}

/** A troupe table of the queue: in the namespace's schema, or unqualified (the default schema). */
export function queueTable(schema: string | null, table: string): string {
  return schema === null ? table : `"${schema}".${table}`;
}

/** Creates the namespace's schema unless it exists (the store makes it too, when the queue is in its database). */
export function createSchemaSql(schema: string | null): string | null {
  return schema === null ? null : `CREATE SCHEMA IF NOT EXISTS "${schema}"`;
}
