import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { ChunkEditName } from '../handlers/chunks.js';

export function registerChunks(program: Command): void {
  const chunks = program.command('chunks').description("a task's chunks: the tracked units of its work");
  chunks
    .command('list')
    .argument('<task>', 'task id')
    .option('--json', 'print JSON')
    .action(
      action(async (taskId: string, options: { json?: boolean }) =>
        (await import('../handlers/chunks.js')).listChunks(taskId, options, processIo()),
      ),
    );
  const edit = (name: ChunkEditName, argument: string, description: string) =>
    chunks
      .command(name)
      .description(description)
      .argument('<task>', 'task id')
      .argument(argument)
      .action(
        action(async (taskId: string, value: string) =>
          (await import('../handlers/chunks.js')).editChunks(taskId, name, value, processIo()),
        ),
      );
  edit('add', '<description>', 'add a chunk (a running task sees it on its next turn)');
  edit('done', '<chunk>', 'mark a chunk done (C-001)');
  edit('remove', '<chunk>', 'remove a chunk');
}
