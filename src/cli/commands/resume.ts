import type { Command } from 'commander';
import { action } from '../action.js';

export function registerResume(program: Command): void {
  program
    .command('resume')
    .description(
      'carry on with an interrupted task (after a crash, kill or reboot); nothing done is done again',
    )
    .argument('<task>', 'task id')
    .option('--interactive', 'ask here when the task waits for a person (default on a terminal)')
    .option('--no-interactive', 'exit with code 6 when the task waits for a person')
    .option('--detach', 'hand the task to the workers (`troupe worker`) instead of running it here')
    .option('--queue <url>', 'the work queue, postgres://… (default: TROUPE_QUEUE, queue: in config)')
    .option('--json', 'print the task as JSON when it stops')
    .action(
      action(
        async (
          taskId: string,
          options: { json?: boolean; interactive?: boolean; detach?: boolean; queue?: string },
        ) => {
          const { openProject } = await import('../../app/project.js');
          const { deadLetters } = await import('../../app/queue-config.js');
          const project = openProject();
          project.tasks.state(taskId); // a task that does not exist is not found, queue or not
          // a task in the dead-letter queue goes back to the workers, not to this shell
          const dead = options.detach ? null : await deadLetters(project, options.queue);
          if (options.detach || dead?.some((d) => d.taskId === taskId)) {
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
        },
      ),
    );
}
