import type { Project } from '../app/project.js';
import { openQueue } from '../app/queue-config.js';
import { enqueueWakeUps } from '../app/worker.js';
import { printJson } from './options.js';

/**
 * `run --detach` (the task made once the queue is open), `resume`, `approve … --detach`: the
 * task's wake-ups go to the queue; prints its id. With `revive`, the task is first taken out of
 * the dead-letter queue.
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
    const revived = options.revive ? await queue.revive(taskId) : false;
    const state = project.tasks.state(taskId);
    const wakes = await enqueueWakeUps(queue, state);
    if (options.json) printJson({ id: taskId, status: state.status, queued: wakes > 0, revived });
    else process.stdout.write(`${taskId}${revived ? ' (out of the dead-letter queue, queued again)' : ''}\n`);
    return 0;
  } finally {
    await queue.close();
  }
}
