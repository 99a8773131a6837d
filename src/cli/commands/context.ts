import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';

export function registerContext(program: Command): void {
  program
    .command('context')
    .description("print a task's shared context (context.md)")
    .argument('<task>', 'task id')
    .option('--json', 'print {id, context, agents: {id: notes}}')
    .action(
      action(async (taskId: string, options: { json?: boolean }) =>
        (await import('../handlers/context.js')).showContext(taskId, options, processIo()),
      ),
    );
}
