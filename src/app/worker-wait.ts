import type { TaskStatus } from '../core/events.js';
import type { TaskState } from '../engine/fold/task-state.js';
import { type WakeUp, wakeUps } from '../engine/plan/wake-ups.js';
import { servesLane } from '../store/queue/work-queue.js';
import type { WorkerRow } from '../store/queue/worker-registry.js';
import type { Project } from './project.js';
import { type QueueWorkers, queueWorkers } from './queue-config.js';
import type { TaskOwner } from './task-view.js';
import { ANY_LANE, laneOf } from './worker.js';

/**
 * Why a task handed to the work queue (`run --detach`, a resume) waits with no worker to take it:
 * none is running, or none of the live ones serves the runtime (and labels) its next steps need.
 * `troupe status`, `list` and the dashboard say it, so a `pending` task does not wait in silence.
 * Null when a live worker can take every wake-up the task needs, when it is held by a live
 * process, when it waits for nothing a worker does (ended, a person, a reply on the bus), and
 * without a queue (`workers` null: a pending task is one no command has started yet).
 */
export function noWorkerReason(
  state: TaskState,
  owner: TaskOwner | null,
  workers: readonly WorkerRow[] | null,
): string | null {
  if (workers === null || !mayWaitForWorker(state.status, owner)) return null;
  const wakes = wakeUps(state);
  if (wakes.length === 0) return null;
  const live = workers.filter((w) => !w.gone);
  if (live.length === 0) return 'no worker is running: start one with `troupe worker`';
  const untaken = wakes.filter(
    (wake) =>
      !live.some((w) => servesLane(laneOf(wake.runtime, wake.labels), [...w.runtimes, ANY_LANE], w.labels)),
  );
  if (untaken.length === 0) return null;
  return `no live worker takes ${untaken.map(describeWake).join(', nor ')}`;
}

/**
 * The queue's workers when one of the tasks shown may wait for them (`waiting`); null without a
 * queue, when none may, or when the queue cannot be read now (it then says nothing of them).
 */
export async function workersIfWaiting(
  read: () => Promise<QueueWorkers | null>,
  waiting: boolean,
): Promise<WorkerRow[] | null> {
  if (!waiting) return null;
  try {
    return (await read())?.workers ?? null;
  } catch {
    return null;
  }
}

/** The same for a command on the project: its queue's workers when one of `tasks` may wait for them. */
export function readWorkersIfWaiting(
  project: Pick<Project, 'root' | 'config'>,
  tasks: ReadonlyArray<{ status: TaskStatus; owner: TaskOwner | null }>,
): Promise<WorkerRow[] | null> {
  return workersIfWaiting(
    () => queueWorkers(project),
    tasks.some((t) => mayWaitForWorker(t.status, t.owner)),
  );
}

/** Which tasks a worker reading may concern: those not ended and not held by a live process. */
export function mayWaitForWorker(status: TaskStatus, owner: TaskOwner | null): boolean {
  return (status === 'pending' || status === 'running') && !owner?.alive;
}

/** `runtime command (troupe worker --runtimes command)`, with the labels it needs. */
function describeWake(wake: WakeUp): string {
  const labels = wake.labels.join(',');
  const what = `${wake.runtime ? `runtime ${wake.runtime}` : 'its steps'}${labels ? ` with labels ${labels}` : ''}`;
  const flags = `${wake.runtime ? ` --runtimes ${wake.runtime}` : ''}${labels ? ` --labels ${labels}` : ''}`;
  return `${what} (\`troupe worker${flags}\`)`;
}
