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
        const { restoreRecordedTip } = await import('../../workspace/recorded-tip.js');
        const { printJson } = await import('../options.js');
        const repo = await findRepo(process.cwd());
        if (!repo) throw new UsageError('not inside a git repository');
        const { openProject } = await import('../../app/project.js');
        const project = openProject();
        const status = project.store.task(taskId)?.status;
        if (status && status !== 'completed') {
          process.stderr.write(`troupe: note: task ${taskId} is ${status}, not completed\n`);
        }
        // as the task's own merge does: only what its log recorded reaches the base
        const workspace = status ? project.tasks.state(taskId).workspace : null;
        if (workspace) {
          const stray = await restoreRecordedTip({
            repo: workspace.repo,
            taskId,
            branch: workspace.branch,
            base: options.base ?? workspace.base,
            recorded: workspace.head ?? null,
          });
          if (stray)
            process.stderr.write(
              `troupe: note: ${workspace.branch} held a commit its log does not know (${stray.sha.slice(0, 12)}); kept as tag ${stray.tag}, not merged\n`,
            );
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
