import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { MergeOptions } from '../handlers/merge.js';

/** `troupe merge <task>`: the task branch into its base (fast-forward when possible). */
export function registerMerge(program: Command): void {
  program
    .command('merge')
    .description("merge a task's branch into its base: fast-forward when possible, else a merge commit")
    .argument('<task>', 'task id')
    .option('--base <branch>', 'merge into this branch instead of the one the task started from')
    .option('--json', 'print JSON: {merged, base, branch, sha}')
    .action(
      action(async (taskId: string, options: MergeOptions) => {
        const { mergeTask } = await import('../handlers/merge.js');
        return mergeTask(taskId, options, processIo());
      }),
    );
}
