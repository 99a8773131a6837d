import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../core/errors.js';
import { Exit } from '../exit-codes.js';
import { type RunOptions, runTask } from './run.js';
import { capturedIo, captureProcessOutput, SCRIPTED_PAIR, scratchProject } from './testing.js';

const printed = captureProcessOutput();

const pair: RunOptions = { pipeline: 'pair', concurrency: 4, label: [], json: true };

describe('troupe run', () => {
  it("runs one input on a scripted pipeline's own replies, with the size and labels given", async () => {
    const dir = scratchProject(SCRIPTED_PAIR);
    expect(await runTask(['write', 'it'], { ...pair, size: 's', label: ['docs'] }, capturedIo(dir))).toBe(
      Exit.ok,
    );
    const json = JSON.parse(printed.join('')) as {
      status: string;
      input: string;
      stages: Array<{ output: string }>;
    };
    expect(json).toMatchObject({ status: 'completed', input: 'write it' });
    expect(json.stages.map((s) => s.output)).toEqual(['drafted', 'edited']);
  });

  it('runs a list of tasks with --from, a dependency after what it depends on', async () => {
    const dir = scratchProject(SCRIPTED_PAIR);
    const from = join(dir, 'tasks.json');
    writeFileSync(
      from,
      JSON.stringify([
        { id: 'second', input: 'two', depends_on: ['first'] },
        { id: 'first', input: 'one' },
      ]),
    );
    expect(await runTask([], { ...pair, from }, capturedIo(dir))).toBe(Exit.ok);
    const results = JSON.parse(printed.join('')) as Array<{ id: string; status: string }>;
    expect(results.map((r) => [r.id, r.status]).sort()).toEqual([
      ['first', 'completed'],
      ['second', 'completed'],
    ]);
  });

  it('refuses what cannot go together before it starts anything', async () => {
    const io = capturedIo(scratchProject(SCRIPTED_PAIR));
    await expect(runTask([], pair, io)).rejects.toThrow('what should the team do?');
    await expect(runTask(['x'], { ...pair, from: 'tasks.json' }, io)).rejects.toThrow(UsageError);
    await expect(runTask([], { ...pair, from: 'tasks.json', size: 'M' }, io)).rejects.toThrow(
      /--size applies/,
    );
    await expect(runTask([], { ...pair, from: 'tasks.json', detach: true }, io)).rejects.toThrow(
      /--detach applies/,
    );
    await expect(runTask(['x'], { ...pair, size: 'XXL' }, io)).rejects.toThrow(
      '--size is one of S, M, L, XL',
    );
  });
});
