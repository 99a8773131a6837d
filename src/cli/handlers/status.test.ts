import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../core/errors.js';
import { showStatus } from './status.js';
import { testPipeline } from './test.js';
import { capturedIo, SCRIPTED_PAIR, scratchProject } from './testing.js';

/** A project with one completed task of the scripted pair; its id. */
async function completedTask(): Promise<{ dir: string; id: string }> {
  const dir = scratchProject(SCRIPTED_PAIR);
  const io = capturedIo(dir);
  await testPipeline({ pipeline: 'pair', input: 'a note', param: [], json: true }, io);
  return { dir, id: (JSON.parse(io.stdout()) as { id: string }).id };
}

describe('troupe status', () => {
  it("prints a task's line and one line per stage", async () => {
    const { dir, id } = await completedTask();
    const io = capturedIo(dir);
    expect(await showStatus(id, {}, io)).toBe(0);
    const lines = io.stdout().split('\n');
    expect(lines[0]).toBe(`${id}  completed  pair  "a note"`);
    expect(lines.filter((l) => /^ {2}\[\d\] /.test(l)).map((l) => l.split(/\s+/).slice(1, 4))).toEqual([
      ['[1]', 'writer', 'completed'],
      ['[2]', 'editor', 'completed'],
    ]);
    expect(lines).toContain('  usage: 8 tok');
  });

  it('prints JSON with the status and no parking', async () => {
    const { dir, id } = await completedTask();
    const io = capturedIo(dir);
    await showStatus(id, { json: true }, io);
    const json = JSON.parse(io.stdout()) as {
      id: string;
      status: string;
      parked: unknown;
      stages: unknown[];
    };
    expect(json).toMatchObject({ id, status: 'completed', parked: null });
    expect(json.stages).toHaveLength(2);
  });

  it('does not know a task that is not in the store', async () => {
    await expect(showStatus('T-NOSUCH', {}, capturedIo(scratchProject()))).rejects.toThrow(NotFoundError);
  });
});
