import type { Command } from 'commander';
import { action } from '../action.js';

export function registerCancel(program: Command): void {
  program
    .command('cancel')
    .description('stop a task, wherever it runs (its process stops within two seconds)')
    .argument('<task>', 'task id')
    .option('-r, --reason <text>', 'why', 'cancelled by user')
    .option('--json', 'print the task as JSON once cancelled (as `troupe status --json`)')
    .action(
      action(async (taskId: string, options: { reason: string; json?: boolean }) => {
        const { openProject } = await import('../../app/project.js');
        const project = openProject();
        project.tasks.cancel(taskId, options.reason);
        if (options.json) {
          const { printJson } = await import('../options.js');
          const { taskJson, taskOwner } = await import('../../app/task-view.js');
          const state = project.tasks.state(taskId);
          printJson(taskJson(state, taskOwner(project.store, taskId, state.status)));
        } else process.stdout.write(`cancelled ${taskId}\n`);
        return 0;
      }),
    );
}
