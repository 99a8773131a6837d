import type { EventStore } from '../core/event-store.js';
import type { TaskState } from '../engine/fold/task-state.js';
import type { TaskService } from '../engine/task-service.js';
import type { ParkedTask } from '../store/queue/task-failures.js';
import type { DeadLetter, WorkQueue } from '../store/queue/work-queue.js';
import { redactStoreUrl } from '../store/store-url.js';
import type { Project } from './project.js';
import { deadLetters, openQueue, parkedTasks, queueUrl } from './queue-config.js';
import { enqueueWakeUps } from './worker.js';

/**
 * Parked tasks (docs/distributed.md): the queue parks a task whose wake-ups failed past its retry
 * limit (store/queue/task-failures.ts) and the task's log says so (`task_parked`), unless the log
 * refused even that. Here: what is parked, by either account, and a person's resume of it.
 */

/** The task's parked mark: its log's, else the queue's (the log refused the append); null: not parked. */
export function parkedOf(state: Readonly<TaskState>, marks: readonly ParkedTask[] | null): ParkedTask | null {
  if (state.parked) return { taskId: state.id, ...state.parked };
  return marks?.find((m) => m.taskId === state.id) ?? null;
}

/** Every parked task: the queue's marks, and tasks whose log says parked though the queue lost its mark. */
export function allParked(store: EventStore, marks: readonly ParkedTask[], state: (id: string) => TaskState) {
  const ids = new Set(marks.map((m) => m.taskId));
  const logged = store
    .tasks({ status: ['parked'] })
    .filter((t) => !ids.has(t.id))
    .flatMap((t) => parkedOf(state(t.id), null) ?? []);
  return [...marks.filter((m) => store.task(m.taskId)), ...logged];
}

export interface Resumed {
  id: string;
  /** Why it was parked, when it was. */
  parked: ParkedTask | null;
  /** It was parked or dead-lettered, and is not any more. */
  revived: boolean;
  /** Wake-ups queued for it. */
  queued: number;
}

/**
 * A person resumes the task through the queue: its log records it (`task_resumed`, when parked),
 * its failure count and parked mark are cleared, it leaves the dead-letter queue, and its
 * wake-ups are queued.
 */
export async function resumeThroughQueue(
  tasks: TaskService,
  queue: WorkQueue,
  taskId: string,
): Promise<Resumed> {
  const mark = await queue.parkedTask(taskId);
  const parked = parkedOf(tasks.state(taskId), mark ? [mark] : null);
  const unparked = tasks.unpark(taskId);
  const revived = (await queue.revive(taskId)) || unparked;
  const queued = await enqueueWakeUps(queue, tasks.state(taskId));
  return { id: taskId, parked, revived, queued };
}

export interface GivenUp {
  /** The queue's database, without its password. */
  queue: string;
  parked: ParkedTask[];
  /** Wake-ups dead-lettered for tasks that are not parked (one for a task this store lacks). */
  deadLetters: DeadLetter[];
}

/** What the project's queue gave up on: parked tasks and the other dead letters; null without a queue. */
export async function givenUp(
  project: Pick<Project, 'root' | 'config' | 'tasks' | 'store'>,
): Promise<GivenUp | null> {
  const [marks, dead] = [await parkedTasks(project), await deadLetters(project)];
  const url = queueUrl(project);
  if (!marks || !dead || !url) return null;
  const parked = allParked(project.store, marks, (id) => project.tasks.state(id));
  const deadLettersLeft = dead.filter((d) => !parked.some((p) => p.taskId === d.taskId));
  return { queue: redactStoreUrl(url), parked, deadLetters: deadLettersLeft };
}

/**
 * Resumes `which` through the project's queue (task ids, or every parked task), as `troupe resume`
 * does; null when the project has no queue.
 */
export async function resumeGivenUp(
  project: Pick<Project, 'root' | 'config' | 'tasks' | 'store'>,
  which: readonly string[] | 'all',
  given?: string,
): Promise<Resumed[] | null> {
  if (!queueUrl(project, given)) return null;
  const queue = await openQueue(project, { ...(given ? { given } : {}), needed: 'resuming parked tasks' });
  try {
    const ids =
      which === 'all'
        ? allParked(project.store, await queue.parked(), (id) => project.tasks.state(id)).map((p) => p.taskId)
        : which;
    const resumed: Resumed[] = [];
    for (const id of ids) resumed.push(await resumeThroughQueue(project.tasks, queue, id));
    return resumed;
  } finally {
    await queue.close();
  }
}
