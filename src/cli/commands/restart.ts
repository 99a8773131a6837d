import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { FixOptions, RestartOptions } from '../handlers/restart.js';

export function registerRestart(program: Command): void {
  program
    .command('restart')
    .description(
      'run a task again from a stage (default: the failed one); later events are set aside, not deleted',
    )
    .argument('<task>', 'task id')
    .option('--from-stage <n>', 'stage number to run again from')
    .option('--json', 'print the task as JSON when it stops')
    .action(
      action(async (taskId: string, options: RestartOptions) => {
        const { restartTask } = await import('../handlers/restart.js');
        return restartTask(taskId, options, processIo());
      }),
    );
  program
    .command('fix')
    .description("start a follow-up task that carries a task's context, linked to it")
    .argument('<task>', 'the task to follow up')
    .argument('<request...>', 'what to fix or do next')
    .option('-a, --agent <id>', 'start at this agent')
    .option(
      '-s, --script <file>',
      'script for the follow-up (default: the first task’s script, if it had one)',
    )
    .option('--json', 'print the new task as JSON when it stops')
    .action(
      action(async (taskId: string, words: string[], options: FixOptions) => {
        const { fixTask } = await import('../handlers/restart.js');
        return fixTask(taskId, words, options, processIo());
      }),
    );
}
