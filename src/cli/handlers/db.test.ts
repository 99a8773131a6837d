import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openProject } from '../../app/project.js';
import { Exit } from '../exit-codes.js';
import { migrate, prune, status } from './db.js';
import { capturedIo, GATED_PIPELINE, runScriptedTask, scratchProject } from './testing.js';

const ONE_AGENT = {
  'one.yaml': 'agents:\n  - id: writer\n    runtime: claude\n    system_prompt: "{{ input }}"\n',
  'one-script.yaml': 'agents:\n  writer: ["the draft"]\n',
};

describe('troupe db', () => {
  afterEach(() => void vi.useRealTimers());

  it('status names the SQLite file and its version; migrate has nothing to do there', async () => {
    const root = scratchProject(GATED_PIPELINE);
    await runScriptedTask(root);
    const io = capturedIo(root);
    expect(await status({}, io)).toBe(Exit.ok);
    expect(io.stdout()).toMatch(
      new RegExp(`^sqlite ${join(root, '.troupe', 'troupe.db')}\\nuser_version \\d+\\n$`),
    );
    const migrated = capturedIo(root);
    await migrate({}, migrated);
    expect(migrated.stdout()).toBe('up to date: nothing to apply\n');
  });

  it('prune deletes finished tasks older than the age given, never an unfinished one', async () => {
    const root = scratchProject({ ...GATED_PIPELINE, ...ONE_AGENT });
    const done = await runScriptedTask(root, { pipeline: 'one.yaml', script: 'one-script.yaml' });
    const waiting = await runScriptedTask(root);
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 2 * 86_400_000);

    const dry = capturedIo(root);
    await prune({ olderThan: '1d', dryRun: true, json: true }, dry);
    const listed = JSON.parse(dry.stdout());
    expect([listed.dryRun, listed.tasks.map((t: { id: string }) => t.id)]).toEqual([true, [done]]);

    const io = capturedIo(root);
    await prune({ olderThan: '1d' }, io);
    expect(io.stdout()).toMatch(/^deleted 1 finished task \(last event before \S+\)\n$/);
    const left = capturedIo(root);
    await prune({ olderThan: '1d', dryRun: true, json: true }, left);
    expect(JSON.parse(left.stdout()).count).toBe(0);
    const store = openProject(root).store;
    expect([store.task(done), store.task(waiting)?.status]).toEqual([undefined, 'awaiting_gate']);
  });

  it('prune refuses an age it cannot read', async () => {
    await expect(prune({ olderThan: 'soon' }, capturedIo(scratchProject()))).rejects.toThrow(
      "invalid --older-than 'soon'",
    );
  });
});
