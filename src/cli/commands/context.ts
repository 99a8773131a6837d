import type { Command } from 'commander';
import { action } from '../action.js';

export function registerContext(program: Command): void {
  program
    .command('context')
    .description("print a task's shared context (context.md)")
    .argument('<task>', 'task id')
    .option('--json', 'print {id, context, agents: {id: notes}}')
    .action(
      action(async (taskId: string, options: { json?: boolean }) => {
        const { openProject } = await import('../../app/project.js');
        const { printJson } = await import('../options.js');
        const state = openProject().tasks.state(taskId);
        if (options.json) printJson({ id: state.id, context: state.contextMd, agents: state.agentNotes });
        else process.stdout.write(state.contextMd);
        return 0;
      }),
    );
}
