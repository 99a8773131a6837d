import type { Command } from 'commander';
import { action } from '../action.js';

export function registerCancel(program: Command): void {
  program
    .command('cancel')
    .description('stop a task, wherever it runs (its process stops within two seconds)')
    .argument('<task>', 'task id')
    .option('-r, --reason <text>', 'why', 'cancelled by user')
    .action(
      action(async (taskId: string, options: { reason: string }) => {
        const { openProject } = await import('../../app/project.js');
        openProject().tasks.cancel(taskId, options.reason);
        process.stdout.write(`cancelled ${taskId}\n`);
        return 0;
      }),
    );
}
