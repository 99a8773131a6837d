import { openProject } from '../../app/project.js';
import { formatChunkTable } from '../../pipeline/lang/chunk-table.js';
import { type CommandIo, writeJson } from '../command-io.js';

export type ChunkEditName = 'add' | 'done' | 'remove';
type ChunkEdit = { add: string } | { done: string } | { remove: string };

/** `troupe chunks list`. */
export async function listChunks(
  taskId: string,
  options: { json?: boolean },
  io: CommandIo,
): Promise<number> {
  const state = openProject(io.cwd).tasks.state(taskId);
  if (options.json) writeJson(io, state.chunks);
  else io.out(`${formatChunkTable(state.chunks)}\n`);
  return 0;
}

/** `troupe chunks add|done|remove`: `value` is the new chunk's description, or the chunk's id. */
export async function editChunks(
  taskId: string,
  edit: ChunkEditName,
  value: string,
  io: CommandIo,
): Promise<number> {
  const chunk = openProject(io.cwd).tasks.editChunks(taskId, { [edit]: value } as ChunkEdit);
  io.out(
    chunk
      ? `added ${chunk.id}: ${chunk.description}\n`
      : `${edit === 'done' ? 'done' : 'removed'}: ${value}\n`,
  );
  return 0;
}
