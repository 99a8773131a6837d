import type { Command } from 'commander';
import { action } from '../action.js';

type Edit = { add: string } | { done: string } | { remove: string };

export function registerChunks(program: Command): void {
  const chunks = program.command('chunks').description("a task's chunks: the tracked units of its work");
  chunks
    .command('list')
    .argument('<task>', 'task id')
    .option('--json', 'print JSON')
    .action(
      action(async (taskId: string, options: { json?: boolean }) => {
        const { openProject } = await import('../../app/project.js');
        const { printJson } = await import('../options.js');
        const { formatChunkTable } = await import('../../pipeline/lang/chunk-table.js');
        const state = openProject().tasks.state(taskId);
        if (options.json) printJson(state.chunks);
        else process.stdout.write(`${formatChunkTable(state.chunks)}\n`);
        return 0;
      }),
    );
  const edit = (name: 'add' | 'done' | 'remove', argument: string, description: string) =>
    chunks
      .command(name)
      .description(description)
      .argument('<task>', 'task id')
      .argument(argument)
      .action(
        action(async (taskId: string, value: string) => {
          const { openProject } = await import('../../app/project.js');
          const chunk = openProject().tasks.editChunks(taskId, { [name]: value } as Edit);
          process.stdout.write(
            chunk
              ? `added ${chunk.id}: ${chunk.description}\n`
              : `${name === 'done' ? 'done' : 'removed'}: ${value}\n`,
          );
          return 0;
        }),
      );
  edit('add', '<description>', 'add a chunk (a running task sees it on its next turn)');
  edit('done', '<chunk>', 'mark a chunk done (C-001)');
  edit('remove', '<chunk>', 'remove a chunk');
}
