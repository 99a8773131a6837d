import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { PrOptions } from '../handlers/pr.js';

/** `troupe pr <task>`: push the task branch and open a pull request with `gh`. */
export function registerPr(program: Command): void {
  program
    .command('pr')
    .description("push a task's branch and open a pull request (needs gh, the GitHub CLI)")
    .argument('<task>', 'task id')
    .option('--base <branch>', 'target branch (default: the branch the task started from)')
    .option('--remote <name>', 'remote to push to', 'origin')
    .option('--title <text>', 'title (default: the task input)')
    .option('--draft', 'open it as a draft')
    .option('--json', 'print JSON: {url, branch, base, existing}')
    .action(
      action(async (taskId: string, options: PrOptions) => {
        const { openPullRequest } = await import('../handlers/pr.js');
        return openPullRequest(taskId, options, processIo());
      }),
    );
}
