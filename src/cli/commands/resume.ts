import type { Command } from 'commander';
import type { Project } from '../../app/project.js';
import { action } from '../action.js';

interface ResumeOptions {
  json?: boolean;
  interactive?: boolean;
  detach?: boolean;
  queue?: string;
  parked?: boolean;
}

export function registerResume(program: Command): void {
  program
    .command('resume')
    .description(
      'carry on with an interrupted task (after a crash, kill or reboot); nothing done is done again',
    )
    .argument('[task]', 'task id')
    .option('--interactive', 'ask here when the task waits for a person (default on a terminal)')
    .option('--no-interactive', 'exit with code 6 when the task waits for a person')
    .option('--detach', 'hand the task to the workers (`troupe worker`) instead of running it here')
    .option('--parked', 'hand every parked task back to the workers (their failure counts start again)')
    .option('--queue <url>', 'the work queue, postgres://… (default: TROUPE_QUEUE, queue: in config)')
    .option('--json', 'print the task as JSON when it stops')
    .action(
      action(async (taskId: string | undefined, options: ResumeOptions) => {
        const { UsageError } = await import('../../core/errors.js');
        const { openProject } = await import('../../app/project.js');
        if (options.parked) {
          if (taskId !== undefined) throw new UsageError('give a task id or --parked, not both');
          return resumeAllParked(openProject(), options);
        }
        if (taskId === undefined) throw new UsageError('give a task id (or --parked for every parked task)');
        const project = openProject();
        project.tasks.state(taskId); // a task that does not exist is not found, queue or not
        // a parked or dead-lettered task goes back to the workers, not to this shell
        const given = !options.detach && (await queueGaveUp(project, taskId, options.queue));
        if (options.detach || given) {
          const { submitTask } = await import('../submit.js');
          return submitTask(project, taskId, {
            queue: options.queue,
            json: options.json === true,
            revive: true,
          });
        }
        const { runForeground } = await import('../foreground.js');
        return runForeground(project, taskId, {
          json: options.json === true,
          ...(options.interactive === undefined ? {} : { interactive: options.interactive }),
        });
      }),
    );
}

/** Whether the queue gave up on the task: parked (by its log or the queue) or dead-lettered. */
async function queueGaveUp(project: Project, taskId: string, queue?: string): Promise<boolean> {
  const { deadLetters, parkedTasks } = await import('../../app/queue-config.js');
  const { parkedOf } = await import('../../app/parked.js');
  if (parkedOf(project.tasks.state(taskId), await parkedTasks(project, queue))) return true;
  return (await deadLetters(project, queue))?.some((d) => d.taskId === taskId) ?? false;
}

/** `resume --parked`: every parked task resumed through the queue, each printed. */
async function resumeAllParked(project: Project, options: ResumeOptions): Promise<number> {
  const { resumeGivenUp } = await import('../../app/parked.js');
  const { QueueError } = await import('../../core/errors.js');
  const { printJson } = await import('../options.js');
  const resumed = await resumeGivenUp(project, 'all', options.queue);
  if (!resumed)
    throw new QueueError('--parked needs the work queue, and none is configured', {
      hint: 'give --queue postgres://…, set TROUPE_QUEUE, or add `queue: postgres://…` to .troupe/config.yaml',
    });
  if (options.json) printJson(resumed);
  else if (resumed.length === 0) process.stdout.write('no parked tasks\n');
  for (const task of options.json ? [] : resumed)
    process.stdout.write(`${task.id}  queued again (was parked: ${task.parked?.reason ?? 'by its log'})\n`);
  return 0;
}
