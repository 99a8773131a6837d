import { describe, expect, it } from 'vitest';
import { listTasks } from './list.js';
import { capturedIo, GATED_PIPELINE, GITHUB_ISSUE, runScriptedTask, scratchProject } from './testing.js';

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

  it('shows the tracker issue a task works on: its identifier in the row, the whole reference (or null) in --json', async () => {
    const root = scratchProject(GATED_PIPELINE);
    const plain = await runScriptedTask(root);
    const tracked = await runScriptedTask(root, undefined, 'fix the bug', GITHUB_ISSUE);
    const text = capturedIo(root);
    await listTasks({ limit: 50 }, text);
    const rows = text.stdout().split('\n');
    expect(rows[0]).toMatch(new RegExp(`^${tracked} .*  fix the bug  \\[#12\\]$`));
    expect(rows[1]).toMatch(new RegExp(`^${plain} .*  write$`));

    const json = capturedIo(root);
    await listTasks({ limit: 50, json: true }, json);
    expect(
      (JSON.parse(json.stdout()) as Array<{ id: string; issue: unknown }>).map((t) => [t.id, t.issue]),
    ).toEqual([
      [tracked, GITHUB_ISSUE],
      [plain, null],
    ]);
  });

  it("prints an issue's identifier safe and short: no escape sequence, no line of its own", async () => {
    const root = scratchProject(GATED_PIPELINE);
    const identifier = '\u001b[31mENG-1\nforged line\u001b]8;;https://evil\u0007 and a very long tail';
    await runScriptedTask(root, undefined, 'write', { ...GITHUB_ISSUE, identifier });
    const text = capturedIo(root);
    await listTasks({ limit: 50 }, text);
    expect(text.stdout()).not.toContain('\u001b');
    expect(text.stdout().split('\n')).toHaveLength(2);
    expect(text.stdout()).toMatch(/ {2}write {2}\[ENG-1 forged line a…\]\n$/);
  });

  it('refuses a status troupe does not have, naming the ones it has', async () => {
    await expect(
      listTasks({ limit: 50, status: 'running,asleep' }, capturedIo(scratchProject())),
    ).rejects.toThrow(/^unknown status asleep; one of .*running/);
  });
});
