import { type Chunk, newChunk } from '../../core/chunk.js';
import type { TaskEvent } from '../../core/events.js';
import type { Pipeline } from '../../core/pipeline.js';
import { formatChunkTable } from '../../pipeline/lang/chunk-table.js';
import { parseChunkDirectives } from '../../pipeline/lang/directives.js';

/**
 * Chunks: the tracked units a task's work is broken into. Seeded from `chunks.initial`,
 * changed by agents' CHUNK_ADD / CHUNK_DONE / CHUNK_REMOVE directives and by people
 * (`troupe chunks`), shown to agents as `{{ chunks }}`.
 */

export function usesChunks(pipeline: Pipeline): boolean {
  return pipeline.agents.some((node) => node.chunks !== null);
}

/** The events an agent's output asks for, in aqm's order: all adds, then dones, then removes. */
export function chunkEventsFromOutput(
  chunks: readonly Chunk[],
  agent: string,
  output: string,
  at: string,
): TaskEvent[] {
  const { add, done, remove } = parseChunkDirectives(output);
  const events: TaskEvent[] = [];
  const known = [...chunks];
  for (const description of add) {
    const chunk = newChunk(known, description, agent, at);
    known.push(chunk);
    events.push({ type: 'chunk_added', chunk });
  }
  for (const id of done) {
    if (known.some((c) => c.id === id)) events.push({ type: 'chunk_updated', id, status: 'done', by: agent });
  }
  for (const id of remove) {
    if (known.some((c) => c.id === id)) events.push({ type: 'chunk_removed', id, by: agent });
  }
  return events;
}

export function chunksVariable(pipeline: Pipeline, chunks: readonly Chunk[]): string {
  return usesChunks(pipeline) ? formatChunkTable(chunks) : '';
}

export function allChunksDone(chunks: readonly Chunk[]): boolean {
  return chunks.every((c) => c.status === 'done');
}
