import { resumeThroughQueue } from '../app/parked.js';
import type { Project } from '../app/project.js';
import { openQueue } from '../app/queue-config.js';
import { enqueueWakeUps } from '../app/worker.js';
import { printJson } from './options.js';

/**
 * `run --detach` (the task made once the queue is open), `resume`, `approve … --detach`: the
 * task's wake-ups go to the queue; prints its id. With `revive`, a parked or dead-lettered task
 * is first resumed (app/parked.ts).
 */
export async function submitTask(
  project: Project,
  task: string | (() => string),
  options: { queue?: string | undefined; json: boolean; revive?: boolean },
): Promise<number> {
  // the queue first: a new task is created only once it can be queued (nothing half-done)
  const queue = await openQueue(project, {
    given: options.queue,
    needed: 'submitting a task to the workers',
  });
  try {
    const taskId = typeof task === 'string' ? task : task();
    const { revived, queued } = options.revive
      ? await resumeThroughQueue(project.tasks, queue, taskId)
      : { revived: false, queued: await enqueueWakeUps(queue, project.tasks.state(taskId)) };
    const status = project.store.task(taskId)?.status;
    if (options.json) printJson({ id: taskId, status, queued: queued > 0, revived });
    else process.stdout.write(`${taskId}${revived ? ' (parked no more, queued again)' : ''}\n`);
    return 0;
  } finally {
    await queue.close();
  }
}
