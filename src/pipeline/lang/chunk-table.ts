import type { Chunk, ChunkStatus } from '../../core/chunk.js';

/** Chunks (small units of a session's work) as aqm stores them and shows them in `{{ chunks }}`. */

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
