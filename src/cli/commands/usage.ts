import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { UsageFlags } from '../handlers/usage.js';

export function registerUsage(program: Command): void {
  program
    .command('usage')
    .description('tokens and cost of the work done, in total and by agent, model, runtime or task')
    .option('-t, --task <id>', 'only this task')
    .option('--since <date>', 'only tasks created since this date or time (ISO, e.g. 2026-11-01)')
    .option('--by <what>', 'agent | model | runtime | task', 'agent')
    .option('--json', 'print JSON: {total, rows}')
    .action(
      action(async (flags: UsageFlags) => {
        const { reportUsage } = await import('../handlers/usage.js');
        return reportUsage(flags, processIo());
      }),
    );
}
