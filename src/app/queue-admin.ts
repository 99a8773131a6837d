import type PgBoss from 'pg-boss';
import { NotFoundError, QueueError, UsageError } from '../core/errors.js';
import type { WorkerLever } from '../store/queue/queue-levers.js';
import type { QueueLocation } from '../store/queue/queue-namespace.js';
import type { QueueOverview } from '../store/queue/queue-overview.js';
import { redactStoreUrl } from '../store/store-url.js';
import type { Project } from './project.js';
import { queueUrl } from './queue-config.js';

/**
 * What an operator reads and pulls on the project's queue from any machine (`troupe queue`,
 * `troupe worker drain|stop <id>`, `troupe queue pause|resume <lane>`, `GET /api/queue`), each
 * on a connection of its own, without starting pg-boss. See docs/distributed.md.
 */

type QueueProject = Pick<Project, 'root' | 'config'>;

/** Runs `use` on the project's queue; a queue error (exit 1) when none is configured or it cannot be reached. */
async function onQueue<T>(
  project: QueueProject,
  given: string | undefined,
  needed: string,
  use: (db: PgBoss.Db, location: QueueLocation) => Promise<T>,
): Promise<T> {
  const url = queueUrl(project, given);
  if (!url)
    throw new QueueError(`${needed} needs a work queue, and none is configured`, {
      hint: 'give --queue postgres://…, set TROUPE_QUEUE, or add `queue: postgres://…` to .troupe/config.yaml',
    });
  const { withQueueDb } = await import('../store/queue/queue-db.js');
  try {
    return await withQueueDb(url, use);
  } catch (error) {
    if (error instanceof NotFoundError || error instanceof UsageError) throw error;
    throw new QueueError(
      `cannot reach the work queue at ${redactStoreUrl(url)}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
}

/**
 * The queue's lanes, active jobs and their holders, dead letters, workers and levers. Without a
 * queue: null, or the queue error when a command (`needed`) asks for it.
 */
export async function readOverview(
  project: QueueProject,
  options: { given?: string; needed?: string } = {},
): Promise<QueueOverview | null> {
  if (!options.needed && !queueUrl(project, options.given)) return null;
  const { queueOverview } = await import('../store/queue/queue-overview.js');
  return onQueue(project, options.given, options.needed ?? 'the queue', (db, location) =>
    queueOverview(db, location.schema),
  );
}

/** `troupe workers --prune`: deletes the rows of every gone worker; how many. */
export async function pruneGoneWorkers(project: QueueProject, given?: string): Promise<number> {
  const { WorkerRegistry } = await import('../store/queue/worker-registry.js');
  return onQueue(project, given, 'troupe workers --prune', (db, location) =>
    new WorkerRegistry(db, location.schema).prune(),
  );
}

/** Asks a live worker to drain or stop; a not-found error when no live worker has that id. */
export async function pullWorkerLever(
  project: QueueProject,
  given: string | undefined,
  id: string,
  lever: WorkerLever,
): Promise<void> {
  const { WorkerRegistry } = await import('../store/queue/worker-registry.js');
  const { QueueLevers } = await import('../store/queue/queue-levers.js');
  await onQueue(project, given, `troupe worker ${lever}`, async (db, location) => {
    const worker = (await new WorkerRegistry(db, location.schema).list()).find((w) => w.id === id);
    if (!worker || worker.gone)
      throw new NotFoundError(`no live worker ${id} on this queue`, { hint: 'see `troupe workers`' });
    await new QueueLevers(db, location.schema).pull(id, lever);
  });
}

const LANE = /^[a-z0-9-]+$/;

/** Pauses (true) or resumes (false) a lane; whether it changed anything. */
export async function setLanePaused(
  project: QueueProject,
  given: string | undefined,
  lane: string,
  paused: boolean,
): Promise<boolean> {
  if (!LANE.test(lane))
    throw new UsageError(`\`${lane}\` is not a lane`, {
      hint: 'a runtime (claude), any, check, or a labelled lane (claude--gpu): see `troupe queue`',
    });
  const { QueueLevers } = await import('../store/queue/queue-levers.js');
  return onQueue(project, given, `troupe queue ${paused ? 'pause' : 'resume'}`, async (db, location) => {
    const levers = new QueueLevers(db, location.schema);
    if (!paused) return levers.resume(lane);
    const was = (await levers.pausedLanes()).includes(lane);
    await levers.pause(lane);
    return !was;
  });
}
