import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { ProviderLimit } from '../../core/routing.js';
import { noRelease, type ProviderTurns, type Release } from '../../scheduler/provider-limiter.js';
import { ensureQueueTable } from './queue-db.js';
import { queueLocation, queueTable } from './queue-namespace.js';

/**
 * `limits:` caps counted across every worker of a queue: each call with a capped provider is a
 * row in the queue's database (`troupe_provider_turns`), taken under an advisory lock per
 * provider when fewer than `concurrency` are open and fewer than `requests_per_minute` started in
 * the last 60 s. A turn of a worker not seen for 30 s (`troupe_workers`) no longer counts, so a
 * killed worker does not hold its turns (nor one that never registered, after 30 s). A turn waits
 * by asking again every 250 ms. Both tables are in the project's namespace (queue-namespace.ts):
 * each project has its own caps.
 */

const createSql = (table: string) => `CREATE TABLE IF NOT EXISTS ${table} (
  id text PRIMARY KEY, provider text NOT NULL, holder text NOT NULL,
  started timestamptz NOT NULL DEFAULT now(), ended timestamptz)`;

/**
 * A turn's holder is alive: seen in the last 30 s, or not registered yet (its first heartbeat
 * may come after its first call) and the turn is from the last 30 s.
 */
const LIVE_HOLDER = `(w.last_seen > now() - interval '30 seconds'
  OR (w.id IS NULL AND t.started > now() - interval '30 seconds'))`;

export async function openSharedLimits(
  url: string,
  limits: Readonly<Record<string, ProviderLimit>>,
  holder: string,
): Promise<SharedLimits> {
  const location = queueLocation(url);
  const { default: pgModule } = await import('pg');
  const pool = new pgModule.Pool({
    connectionString: location.url,
    max: 2,
    application_name: 'troupe-limits',
  });
  pool.on('error', () => {}); // an idle connection dropped: the next query makes a new one
  const tables = {
    turns: queueTable(location.schema, 'troupe_provider_turns'),
    workers: queueTable(location.schema, 'troupe_workers'),
  };
  await ensureQueueTable({ executeSql: (text, values) => pool.query(text, values) }, location.schema, [
    createSql(tables.turns),
  ]);
  return new SharedLimits(pool, limits, holder, tables);
}

export class SharedLimits implements ProviderTurns {
  constructor(
    private readonly pool: pg.Pool,
    private readonly limits: Readonly<Record<string, ProviderLimit>>,
    private readonly holder: string,
    private readonly tables: { turns: string; workers: string },
  ) {}

  acquire(runtime: string, provider: string, signal?: AbortSignal): Release | Promise<Release> {
    const limit = this.limits[runtime];
    if (!limit || (limit.concurrency === null && limit.requests_per_minute === null)) return noRelease;
    return this.take(limit, provider, signal);
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async take(limit: ProviderLimit, provider: string, signal?: AbortSignal): Promise<Release> {
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const id = await this.tryTake(limit, provider);
      if (id) {
        let released = false;
        return () => {
          if (released) return;
          released = true;
          this.pool
            .query(`UPDATE ${this.tables.turns} SET ended = now() WHERE id = $1`, [id])
            .catch(() => {});
        };
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  private async tryTake(limit: ProviderLimit, provider: string): Promise<string | null> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`troupe-limit:${provider}`]);
      const { rows } = await client.query<{ open: string; recent: string; since_last: number | null }>(
        `SELECT count(*) FILTER (WHERE t.ended IS NULL AND ${LIVE_HOLDER}) AS open,
                count(*) FILTER (WHERE t.started > now() - interval '60 seconds') AS recent,
                extract(epoch FROM now() - max(t.started))::float AS since_last
         FROM ${this.tables.turns} t LEFT JOIN ${this.tables.workers} w ON w.id = t.holder
         WHERE t.provider = $1 AND (t.ended IS NULL OR t.started > now() - interval '60 seconds')`,
        [provider],
      );
      const row = rows[0]!;
      if (!allowed(limit, Number(row.open), Number(row.recent), row.since_last)) {
        await client.query('ROLLBACK');
        return null;
      }
      const id = randomUUID();
      await client.query(`INSERT INTO ${this.tables.turns} (id, provider, holder) VALUES ($1, $2, $3)`, [
        id,
        provider,
        this.holder,
      ]);
      await client.query('COMMIT');
      return id;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }
}

/** Whether another call may start, as ProviderLimiter decides for one process. */
function allowed(limit: ProviderLimit, open: number, recent: number, sinceLast: number | null): boolean {
  if (limit.concurrency !== null && open >= limit.concurrency) return false;
  const rpm = limit.requests_per_minute;
  if (rpm === null) return true;
  // a fractional cap (0.5 a minute) spaces calls evenly instead
  if (rpm < 1) return sinceLast === null || sinceLast >= 60 / rpm;
  return recent < Math.floor(rpm);
}
