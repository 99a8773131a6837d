import type { Command } from 'commander';
import { action } from '../action.js';

/** `troupe merge <task>`: the task branch into its base (fast-forward when possible). */
export function registerMerge(program: Command): void {
  program
    .command('merge')
    .description("merge a task's branch into its base: fast-forward when possible, else a merge commit")
    .argument('<task>', 'task id')
    .option('--base <branch>', 'merge into this branch instead of the one the task started from')
    .option('--json', 'print JSON: {merged, base, branch, sha}')
    .action(
      action(async (taskId: string, options: { base?: string; json?: boolean }) => {
        const { UsageError } = await import('../../core/errors.js');
        const { findRepo, mergeIntoBase, MergeConflictError } = await import('../../workspace/index.js');
        const { printJson } = await import('../options.js');
        const repo = await findRepo(process.cwd());
        if (!repo) throw new UsageError('not inside a git repository');
        const { openProject } = await import('../../app/project.js');
        const status = openProject().store.task(taskId)?.status;
        if (status && status !== 'completed') {
          process.stderr.write(`troupe: note: task ${taskId} is ${status}, not completed\n`);
        }
        const result = await mergeIntoBase({ repo, taskId, ...(options.base ? { base: options.base } : {}) });
        if ('conflict' in result) {
          const { branch, base, files } = result.conflict;
          throw new MergeConflictError(
            branch,
            base,
            files,
            `nothing was changed; resolve it in the task worktree (cd .troupe/worktrees/${taskId} && git merge ${base}), then run \`troupe merge ${taskId}\` again`,
          );
        }
        if (options.json) {
          printJson(result);
          return 0;
        }
        const how =
          result.merged === 'up-to-date'
            ? 'already merged'
            : result.merged === 'fast-forward'
              ? 'fast-forward'
              : 'merge commit';
        process.stdout.write(`${result.branch} → ${result.base}: ${how} (${result.sha.slice(0, 12)})\n`);
        return 0;
      }),
    );
}
