/** Chunks: small units of a session's work, tracked as aqm tracks them. */

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
