import { describe, expect, it } from 'vitest';
import { listTasks } from './list.js';
import { capturedIo, GATED_PIPELINE, runScriptedTask, scratchProject } from './testing.js';

describe('troupe list', () => {
  it('says so when there are no tasks', async () => {
    const io = capturedIo(scratchProject());
    expect(await listTasks({ limit: 50 }, io)).toBe(0);
    expect(io.stdout()).toBe('no tasks\n');
  });

  it('lists a task waiting at a gate with what it asks, and filters by status', async () => {
    const root = scratchProject(GATED_PIPELINE);
    const id = await runScriptedTask(root);
    const waiting = capturedIo(root);
    await listTasks({ limit: 50, waiting: true }, waiting);
    expect(waiting.stdout()).toMatch(
      new RegExp(`^${id}  awaiting_gate\\s+p\\s+\\S+  write\\n\\s+writer asks: approval\\n$`),
    );

    const completed = capturedIo(root);
    await listTasks({ limit: 50, status: 'completed' }, completed);
    expect(completed.stdout()).toBe('no tasks\n');

    const json = capturedIo(root);
    await listTasks({ limit: 50, json: true }, json);
    expect(JSON.parse(json.stdout())).toEqual([
      expect.objectContaining({ id, status: 'awaiting_gate', pipeline: 'p', input: 'write' }),
    ]);
  });

  it('refuses a status troupe does not have, naming the ones it has', async () => {
    await expect(
      listTasks({ limit: 50, status: 'running,asleep' }, capturedIo(scratchProject())),
    ).rejects.toThrow(/^unknown status asleep; one of .*running/);
  });
});
