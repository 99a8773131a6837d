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
    .option('--json', 'print the task as JSON when it stops')
    .action(
      action(async (taskId: string, options: { json?: boolean; interactive?: boolean }) => {
        const { openProject } = await import('../../app/project.js');
        const { runForeground } = await import('../foreground.js');
        return runForeground(openProject(), taskId, {
          json: options.json === true,
          ...(options.interactive === undefined ? {} : { interactive: options.interactive }),
        });
      }),
    );
}
