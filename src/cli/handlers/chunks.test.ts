import { describe, expect, it } from 'vitest';
import { editChunks, listChunks } from './chunks.js';
import { capturedIo, GATED_PIPELINE, runScriptedTask, scratchProject } from './testing.js';

describe('troupe chunks', () => {
  it('adds, marks done and removes chunks, and lists them', async () => {
    const root = scratchProject(GATED_PIPELINE);
    const id = await runScriptedTask(root);
    const io = capturedIo(root);
    await editChunks(id, 'add', 'write the docs', io);
    await editChunks(id, 'done', 'C-001', io);
    await editChunks(id, 'remove', 'C-002', io);
    expect(io.stdout()).toBe('added C-003: write the docs\ndone: C-001\nremoved: C-002\n');

    const json = capturedIo(root);
    await listChunks(id, { json: true }, json);
    expect(JSON.parse(json.stdout()).map((c: { id: string; status: string }) => [c.id, c.status])).toEqual([
      ['C-001', 'done'],
      ['C-003', 'pending'],
    ]);
    const table = capturedIo(root);
    await listChunks(id, {}, table);
    expect(table.stdout()).toContain('write the docs');
  });
});
