import type { Pipeline } from './pipeline.js';

/**
 * Chunks: small units of a session's work, tracked as aqm tracks them. Their ids and how a task's
 * first chunks come from its pipeline live here, below both the fold (which seeds them) and the
 * planner (which adds them from agents' directives).
 */

export type ChunkStatus = 'pending' | 'in_progress' | 'done';

export interface Chunk {
  id: string;
  description: string;
  status: ChunkStatus;
  /** "config", "user" or the id of the agent that added it. */
  created_by: string;
  completed_by: string | null;
  created_at: string;
  updated_at: string;
}

/** The first free id in C-001, C-002, … (a removed chunk's id is used again, as aqm). */
export function nextChunkId(chunks: readonly Pick<Chunk, 'id'>[]): string {
  const taken = new Set(chunks.map((c) => c.id));
  for (let n = 1; ; n++) {
    const id = `C-${String(n).padStart(3, '0')}`;
    if (!taken.has(id)) return id;
  }
}

export function newChunk(existing: readonly Chunk[], description: string, by: string, at: string): Chunk {
  return {
    id: nextChunkId(existing),
    description,
    status: 'pending',
    created_by: by,
    completed_by: null,
    created_at: at,
    updated_at: at,
  };
}

/** Every node's `chunks.initial`, in pipeline order, numbered C-001, C-002, … */
export function initialChunks(pipeline: Pipeline, at: string): Chunk[] {
  const chunks: Chunk[] = [];
  for (const node of pipeline.agents) {
    for (const description of node.chunks?.initial ?? []) {
      chunks.push(newChunk(chunks, description, 'config', at));
    }
  }
  return chunks;
}
