import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { ResumeOptions } from '../handlers/resume.js';
import { addInteractiveOptions } from '../pipeline-flags.js';

export function registerResume(program: Command): void {
  addInteractiveOptions(
    program
      .command('resume')
      .description(
        'carry on with an interrupted task (after a crash, kill or reboot); nothing done is done again',
      )
      .argument('[task]', 'task id'),
  )
    .option('--detach', 'hand the task to the workers (`troupe worker`) instead of running it here')
    .option('--parked', 'hand every parked task back to the workers (their failure counts start again)')
    .option('--queue <url>', 'the work queue, postgres://… (default: TROUPE_QUEUE, queue: in config)')
    .option('--json', 'print the task as JSON when it stops')
    .action(
      action(async (taskId: string | undefined, options: ResumeOptions) => {
        const { resumeTask } = await import('../handlers/resume.js');
        return resumeTask(taskId, options, processIo());
      }),
    );
}
