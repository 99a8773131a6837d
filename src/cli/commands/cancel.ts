import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { CancelOptions } from '../handlers/cancel.js';

export function registerCancel(program: Command): void {
  program
    .command('cancel')
    .description('stop a task, wherever it runs (its process stops within two seconds)')
    .argument('<task>', 'task id')
    .option('-r, --reason <text>', 'why', 'cancelled by user')
    .option('--json', 'print the task as JSON once cancelled (as `troupe status --json`)')
    .action(
      action(async (taskId: string, options: CancelOptions) =>
        (await import('../handlers/cancel.js')).cancelTask(taskId, options, processIo()),
      ),
    );
}
