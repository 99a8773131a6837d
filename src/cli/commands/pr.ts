import type { Command } from 'commander';
import { action } from '../action.js';

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
      action(
        async (
          taskId: string,
          options: { base?: string; remote: string; title?: string; draft?: boolean; json?: boolean },
        ) => {
          const { UsageError } = await import('../../core/errors.js');
          const { findRepo, pullRequest } = await import('../../workspace/index.js');
          const { printJson } = await import('../options.js');
          const repo = await findRepo(process.cwd());
          if (!repo) throw new UsageError('not inside a git repository');
          const { openProject } = await import('../../app/project.js');
          const task = openProject().store.task(taskId);
          const input = task?.input.split('\n')[0]?.trim() ?? '';
          const title = options.title ?? (input ? input.slice(0, 72) : `troupe task ${taskId}`);
          const body = [
            `Opened by troupe for task ${taskId}${task ? ` (pipeline ${task.pipeline}, ${task.status})` : ''}.`,
            ...(task ? ['', ...task.input.split('\n').map((l) => `> ${l}`)] : []),
          ].join('\n');
          const result = await pullRequest({
            repo,
            taskId,
            title,
            body,
            remote: options.remote,
            ...(options.base ? { base: options.base } : {}),
            ...(options.draft ? { draft: true } : {}),
          });
          if (options.json) printJson(result);
          else process.stdout.write(`${result.existing ? 'already open' : 'opened'}: ${result.url}\n`);
          return 0;
        },
      ),
    );
}
