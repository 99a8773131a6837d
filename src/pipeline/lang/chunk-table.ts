/** Chunks (small units of a session's work) as aqm stores them and shows them in `{{ chunks }}`. */

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

const STATUS_MARK: Record<ChunkStatus, string> = { pending: '⬜', in_progress: '🔄', done: '✅' };

/** aqm's markdown table with a progress footer; in_progress counts as remaining. */
export function formatChunkTable(chunks: readonly Chunk[]): string {
  if (chunks.length === 0) return '(no chunks defined)';
  const rows = chunks.map(
    (c) => `| ${c.id} | ${STATUS_MARK[c.status]} ${c.status} | ${c.description.replaceAll('|', '\\|')} |`,
  );
  const done = chunks.filter((c) => c.status === 'done').length;
  const footer = `\n**Progress: ${done}/${chunks.length} done, ${chunks.length - done} remaining**`;
  return ['| ID | Status | Description |', '|---|---|---|', ...rows, footer].join('\n');
}

/** The first free id in C-001, C-002, … (a removed chunk's id is used again, as aqm). */
export function nextChunkId(chunks: readonly Pick<Chunk, 'id'>[]): string {
  const taken = new Set(chunks.map((c) => c.id));
  for (let n = 1; ; n++) {
    const id = `C-${String(n).padStart(3, '0')}`;
    if (!taken.has(id)) return id;
  }
}
