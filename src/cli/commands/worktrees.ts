import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { WorktreesOptions } from '../handlers/worktrees.js';

/** `troupe worktrees [list|prune]`: handlers/worktrees.ts. */
export function registerWorktrees(program: Command): void {
  program
    .command('worktrees')
    .description(
      "list troupe's git worktrees, or prune those of ended tasks whose commits are merged or pushed",
    )
    .argument('[action]', 'list | prune', 'list')
    .option('--dry-run', 'prune: say what would be removed, change nothing')
    .option(
      '--force',
      'prune: also remove unsafe ones (unmerged commits are kept as tags troupe/archive/<task>)',
    )
    .option('--json', 'print JSON')
    .action(
      action(async (what: string, options: WorktreesOptions) => {
        const { worktrees } = await import('../handlers/worktrees.js');
        return worktrees(what, options, processIo());
      }),
    );
}
