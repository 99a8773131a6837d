import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { StatusOptions } from '../handlers/status.js';

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description("a task's stages: agent, status, gate verdict, duration, tokens")
    .argument('<task>', 'task id')
    .option('--json', 'print the task as JSON')
    .action(
      action(async (taskId: string, options: StatusOptions) => {
        const { showStatus } = await import('../handlers/status.js');
        return showStatus(taskId, options, processIo());
      }),
    );
}
