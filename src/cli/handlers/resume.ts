import { parkedOf, resumeGivenUp } from '../../app/parked.js';
import { openProject, type Project } from '../../app/project.js';
import { deadLetters, parkedTasks } from '../../app/queue-config.js';
import { QueueError, UsageError } from '../../core/errors.js';
import { type CommandIo, writeJson } from '../command-io.js';
import { runForeground } from '../foreground.js';
import { submitTask } from '../submit.js';

export interface ResumeOptions {
  json?: boolean;
  interactive?: boolean;
  detach?: boolean;
  queue?: string;
  parked?: boolean;
}

/**
 * `troupe resume [task] | --parked`: carry on a task here, or hand it to the workers (--detach,
 * and always when the queue gave up on it).
 */
export async function resumeTask(
  taskId: string | undefined,
  options: ResumeOptions,
  io: CommandIo,
): Promise<number> {
  if (options.parked) {
    if (taskId !== undefined) throw new UsageError('give a task id or --parked, not both');
    return resumeAllParked(openProject(io.cwd), options, io);
  }
  if (taskId === undefined) throw new UsageError('give a task id (or --parked for every parked task)');
  const project = openProject(io.cwd);
  project.tasks.state(taskId); // a task that does not exist is not found, queue or not
  // a parked or dead-lettered task goes back to the workers, not to this shell
  const given = !options.detach && (await queueGaveUp(project, taskId, options.queue));
  if (options.detach || given) {
    return submitTask(project, taskId, { queue: options.queue, json: options.json === true, revive: true });
  }
  return runForeground(project, taskId, {
    json: options.json === true,
    ...(options.interactive === undefined ? {} : { interactive: options.interactive }),
  });
}

/** Whether the queue gave up on the task: parked (by its log or the queue) or dead-lettered. */
async function queueGaveUp(project: Project, taskId: string, queue?: string): Promise<boolean> {
  if (parkedOf(project.tasks.state(taskId), await parkedTasks(project, queue))) return true;
  return (await deadLetters(project, queue))?.some((d) => d.taskId === taskId) ?? false;
}

/** `resume --parked`: every parked task resumed through the queue, each printed. */
async function resumeAllParked(project: Project, options: ResumeOptions, io: CommandIo): Promise<number> {
  const resumed = await resumeGivenUp(project, 'all', options.queue);
  if (!resumed)
    throw new QueueError('--parked needs the work queue, and none is configured', {
      hint: 'give --queue postgres://…, set TROUPE_QUEUE, or add `queue: postgres://…` to .troupe/config.yaml',
    });
  if (options.json) writeJson(io, resumed);
  else if (resumed.length === 0) io.out('no parked tasks\n');
  for (const task of options.json ? [] : resumed)
    io.out(`${task.id}  queued again (was parked: ${task.parked?.reason ?? 'by its log'})\n`);
  return 0;
}
