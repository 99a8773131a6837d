import { describe, expect, it } from 'vitest';
import { UsageError } from '../../core/errors.js';
import { testPipeline } from './test.js';
import { capturedIo, SCRIPTED_PAIR, scratchProject } from './testing.js';
import { reportUsage } from './usage.js';

interface Report {
  by: string;
  total: { stages: number };
  rows: Array<{ key: string; stages: number }>;
}

/** A project where the scripted pair ran twice. */
async function twoTasks(): Promise<{ dir: string; ids: string[] }> {
  const dir = scratchProject(SCRIPTED_PAIR);
  const ids: string[] = [];
  for (const input of ['one', 'two']) {
    const io = capturedIo(dir);
    await testPipeline({ pipeline: 'pair', input, param: [], json: true }, io);
    ids.push((JSON.parse(io.stdout()) as { id: string }).id);
  }
  return { dir, ids };
}

async function report(dir: string, flags: { by: string; task?: string; since?: string }): Promise<Report> {
  const io = capturedIo(dir);
  expect(await reportUsage({ ...flags, json: true }, io)).toBe(0);
  return JSON.parse(io.stdout()) as Report;
}

describe('troupe usage', () => {
  it('counts the completed stages by agent, by task, and by runtime (scripted)', async () => {
    const { dir, ids } = await twoTasks();
    const byAgent = await report(dir, { by: 'agent' });
    expect(byAgent.total.stages).toBe(4);
    expect(byAgent.rows.map((r) => [r.key, r.stages]).sort()).toEqual([
      ['editor', 2],
      ['writer', 2],
    ]);
    expect((await report(dir, { by: 'task' })).rows.map((r) => r.key).sort()).toEqual([...ids].sort());
    expect((await report(dir, { by: 'runtime' })).rows.map((r) => r.key)).toEqual(['scripted']);
    expect((await report(dir, { by: 'agent', task: ids[0]! })).total.stages).toBe(2);
    expect((await report(dir, { by: 'agent', since: '2999-01-01' })).total.stages).toBe(0);
  });

  it('prints a table with a header, a row per key and the total', async () => {
    const { dir } = await twoTasks();
    const io = capturedIo(dir);
    await reportUsage({ by: 'runtime' }, io);
    const lines = io.stdout().trimEnd().split('\n');
    expect(lines.map((l) => l.split(/\s+/)[0])).toEqual(['runtime', 'scripted', 'total']);
    expect(lines[0]).toMatch(/stages +input +cached +output +cost$/);
  });

  it('refuses an unknown --by and a --since that is not a date', async () => {
    const io = capturedIo(scratchProject());
    await expect(reportUsage({ by: 'colour' }, io)).rejects.toThrow(UsageError);
    await expect(reportUsage({ by: 'agent', since: 'yesterday' }, io)).rejects.toThrow(/is not a date/);
  });
});
