import { describe, expect, it } from 'vitest';
import { openProject } from '../../app/project.js';
import { UsageError } from '../../core/errors.js';
import { fixTask, restartTask } from './restart.js';
import { testPipeline } from './test.js';
import { capturedIo, captureProcessOutput, SCRIPTED_PAIR, scratchProject } from './testing.js';

/** What the foreground run printed on the process's stdout (it runs the task where it is). */
const printed = captureProcessOutput();

async function completedTask(): Promise<{ dir: string; id: string }> {
  const dir = scratchProject(SCRIPTED_PAIR);
  const io = capturedIo(dir);
  await testPipeline({ pipeline: 'pair', input: 'a note', param: [], json: true }, io);
  return { dir, id: (JSON.parse(io.stdout()) as { id: string }).id };
}

describe('troupe restart', () => {
  it('runs a task again from the stage given; the later events are set aside', async () => {
    const { dir, id } = await completedTask();
    const io = capturedIo(dir);
    expect(await restartTask(id, { fromStage: '2', json: true }, io)).toBe(0);
    const json = JSON.parse(printed.join('')) as { id: string; status: string; stages: unknown[] };
    expect(json).toMatchObject({ id, status: 'completed' });
    expect(json.stages).toHaveLength(2);
    const text = capturedIo(dir);
    await restartTask(id, { fromStage: '1' }, text);
    expect(text.stderr()).toBe(`restarting ${id} from stage 1\n`);
  });

  it('refuses a stage that is not a number', async () => {
    const { dir, id } = await completedTask();
    await expect(restartTask(id, { fromStage: 'two' }, capturedIo(dir))).rejects.toThrow(UsageError);
  });
});

describe('troupe fix', () => {
  it("starts a follow-up task on the first one's script, linked to it", async () => {
    const { dir, id } = await completedTask();
    expect(await fixTask(id, ['tighten', 'it'], { json: true }, capturedIo(dir))).toBe(0);
    const json = JSON.parse(printed.join('')) as { id: string; status: string; input: string };
    expect(json.id).not.toBe(id);
    expect(json.status).toBe('completed');
    expect(json.input).toMatch(new RegExp(`^tighten it\\n\\n--- Follow-up of ${id}: a note ---`));
    expect(
      openProject(dir)
        .store.tasks()
        .map((t) => t.id),
    ).toContain(json.id);
  });
});
