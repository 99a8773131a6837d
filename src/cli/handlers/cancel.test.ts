import { describe, expect, it } from 'vitest';
import { cancelTask } from './cancel.js';
import { capturedIo, GATED_PIPELINE, runScriptedTask, scratchProject } from './testing.js';

describe('troupe cancel', () => {
  it('cancels a task waiting at a gate, and prints it as JSON with --json', async () => {
    const root = scratchProject(GATED_PIPELINE);
    const id = await runScriptedTask(root);
    const io = capturedIo(root);
    expect(await cancelTask(id, { reason: 'changed my mind', json: true }, io)).toBe(0);
    expect(JSON.parse(io.stdout())).toMatchObject({ id, status: 'cancelled', waiting: null });
  });

  it('says which task it cancelled', async () => {
    const root = scratchProject(GATED_PIPELINE);
    const id = await runScriptedTask(root);
    const io = capturedIo(root);
    await cancelTask(id, { reason: 'cancelled by user' }, io);
    expect(io.stdout()).toBe(`cancelled ${id}\n`);
  });

  it('refuses a task that does not exist', async () => {
    await expect(cancelTask('T-000000', { reason: 'x' }, capturedIo(scratchProject()))).rejects.toThrow(
      /T-000000/,
    );
  });
});
