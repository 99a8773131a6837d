import { QueueError } from '../core/errors.js';
import type { PgBossQueue, QueueSettings } from '../store/queue/pg-boss-queue.js';
import { withDefaultSchema } from '../store/queue/queue-namespace.js';
import type { ParkedTask } from '../store/queue/task-failures.js';
import type { DeadLetter } from '../store/queue/work-queue.js';
import type { WorkerRow } from '../store/queue/worker-registry.js';
import { redactStoreUrl } from '../store/store-url.js';
import { type Project, projectStoreLocation } from './project.js';

/**
 * Where the work queue is: `--queue`, else `TROUPE_QUEUE`, else `queue:` in .troupe/config.yaml,
 * else the store's own database when the store is PostgreSQL (`--store`, `TROUPE_STORE`,
 * `store:`). Null: none. Its `?schema=` keeps the project's queue apart from other projects' on
 * the same database (store/queue/queue-namespace.ts): by default the store's schema.
 */
export function queueUrl(project: Pick<Project, 'root' | 'config'>, given?: string): string | null {
  const store = projectStoreLocation(project.root, project.config);
  const url =
    given ||
    process.env.TROUPE_QUEUE ||
    project.config.queue ||
    (store.kind === 'postgres' ? store.url : null);
  if (!url) return null;
  return store.kind === 'postgres' && store.schema ? withDefaultSchema(url, store.schema) : url;
}

/** A positive number from the environment (tests and operators tune the queue's timing this way). */
function fromEnv(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

/** How long a task held by a worker that stopped answering waits before another takes it (s). */
export function checkSeconds(): number {
  return fromEnv('TROUPE_LEASE_SECONDS') ?? 15;
}

/** Opens the project's queue; a usage error when none is configured. */
export async function openQueue(
  project: Pick<Project, 'root' | 'config'>,
  options: {
    given?: string;
    supervise?: boolean;
    onError?: (error: Error) => void;
    onWakeFailed?: QueueSettings['onWakeFailed'];
    needed: string;
  },
): Promise<PgBossQueue> {
  const url = queueUrl(project, options.given);
  if (!url) {
    throw new QueueError(`${options.needed} needs a work queue, and none is configured`, {
      hint: 'give --queue postgres://…, set TROUPE_QUEUE, or add `queue: postgres://…` to .troupe/config.yaml',
    });
  }
  const { openPgBossQueue } = await import('../store/queue/pg-boss-queue.js');
  const settings: QueueSettings = {
    url,
    supervise: options.supervise ?? false,
    ...(fromEnv('TROUPE_QUEUE_RETRY_LIMIT') === undefined
      ? {}
      : { retryLimit: fromEnv('TROUPE_QUEUE_RETRY_LIMIT')! }),
    ...(fromEnv('TROUPE_QUEUE_RETRY_DELAY') === undefined
      ? {}
      : { retryDelaySeconds: fromEnv('TROUPE_QUEUE_RETRY_DELAY')! }),
    // how soon an idle worker sees new work, against the queries it makes while idle (ms)
    ...(fromEnv('TROUPE_QUEUE_POLL_MS') === undefined ? {} : { pollMs: fromEnv('TROUPE_QUEUE_POLL_MS')! }),
    ...(options.onError ? { onError: options.onError } : {}),
    ...(options.onWakeFailed ? { onWakeFailed: options.onWakeFailed } : {}),
  };
  try {
    return await openPgBossQueue(settings);
  } catch (error) {
    throw new QueueError(
      `cannot open the work queue at ${redactStoreUrl(url)}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
}

export interface QueueWorkers {
  /** The queue's database, without its password. */
  queue: string;
  workers: WorkerRow[];
}

/** The workers on the project's queue (as `troupe workers`); null when no queue is configured. */
export async function queueWorkers(
  project: Pick<Project, 'root' | 'config'>,
  given?: string,
): Promise<QueueWorkers | null> {
  const url = queueUrl(project, given);
  if (!url) return null;
  const { readWorkers } = await import('../store/queue/worker-registry.js');
  try {
    return { queue: redactStoreUrl(url), workers: await readWorkers(url) };
  } catch (error) {
    const message = `cannot read the workers at ${redactStoreUrl(url)}: ${(error as Error).message}`;
    throw new QueueError(message, { cause: error });
  }
}

/**
 * The tasks in the dead-letter queue; null when no queue is configured. Read with one query,
 * without starting pg-boss (which would install its schema in a store's database that has none).
 */
export async function deadLetters(
  project: Pick<Project, 'root' | 'config'>,
  given?: string,
): Promise<DeadLetter[] | null> {
  const url = queueUrl(project, given);
  if (!url) return null;
  const { readDeadLetters } = await import('../store/queue/pg-boss-queue.js');
  try {
    return await readDeadLetters(url);
  } catch (error) {
    const message = `cannot read the dead-letter queue at ${redactStoreUrl(url)}: ${(error as Error).message}`;
    throw new QueueError(message, { cause: error });
  }
}

/** The tasks the queue parked (their wake-ups kept failing); null when no queue is configured. */
export async function parkedTasks(
  project: Pick<Project, 'root' | 'config'>,
  given?: string,
): Promise<ParkedTask[] | null> {
  const url = queueUrl(project, given);
  if (!url) return null;
  const { readParkedTasks } = await import('../store/queue/task-failures.js');
  try {
    return await readParkedTasks(url);
  } catch (error) {
    const message = `cannot read the parked tasks at ${redactStoreUrl(url)}: ${(error as Error).message}`;
    throw new QueueError(message, { cause: error });
  }
}
