import type { Command } from 'commander';
import { action } from '../action.js';
import { wholeNumber } from '../arg-parsers.js';
import { processIo } from '../command-io.js';
import type { ListOptions } from '../handlers/list.js';

export function registerList(program: Command): void {
  program
    .command('list')
    .description('list tasks, newest first')
    .option('--status <status>', 'only tasks with this status (comma list)')
    .option('--waiting', 'only tasks waiting for a person, with what they ask')
    .option(
      '--dead',
      'only tasks the work queue gave up on (parked, or in its dead-letter queue), with their last error',
    )
    .option('-n, --limit <n>', 'at most n tasks', wholeNumber(1), 50)
    .option('--json', 'print JSON: [{id, status, pipeline, input, created, owner (while it has not ended)}]')
    .action(
      action(async (options: ListOptions) =>
        (await import('../handlers/list.js')).listTasks(options, processIo()),
      ),
    );
}
