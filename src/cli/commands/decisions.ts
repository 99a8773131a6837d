import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { DecisionsFlags } from '../handlers/decisions.js';

export function registerDecisions(program: Command): void {
  program
    .command('decisions')
    .description('routing decisions and their outcomes, summarised per tier and kind of task')
    .option('-t, --task <id>', 'only this task, decision by decision')
    .option('--since <date>', 'only decisions made since this date or time (ISO)')
    .option('--json', 'print JSON: {summary, decisions}')
    .action(
      action(async (flags: DecisionsFlags) =>
        (await import('../handlers/decisions.js')).showDecisions(flags, processIo()),
      ),
    );
}
