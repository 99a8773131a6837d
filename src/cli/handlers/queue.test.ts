import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { testDatabase } from '../../../test/support/queue-db.js';
import { pauseLane, showQueue } from './queue.js';
import { runTask } from './run.js';
import { capturedIo, SCRIPTED_PAIR, scratchProject } from './testing.js';
import { listWorkers } from './workers.js';

/** `troupe queue`, its lane levers, `troupe workers` and `run --detach`, on a PostgreSQL queue of the test's own. */

let printed: string[];
beforeEach(() => {
  printed = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((text) => printed.push(String(text)) > 0);
});
afterEach(() => void vi.restoreAllMocks());

describe('troupe queue / workers', () => {
  it('shows a detached task waiting in its lane, and pauses the lane once', async () => {
    await using db = await testDatabase();
    const dir = scratchProject(SCRIPTED_PAIR);
    const queue = db.url;
    const run = { pipeline: 'pair', concurrency: 4, label: [], detach: true, queue };
    expect(await runTask(['write', 'it'], run, capturedIo(dir))).toBe(0);
    const id = printed.join('').trim();
    expect(id).toMatch(/^T-[0-9A-F]{6}$/);

    const io = capturedIo(dir);
    expect(await showQueue({ queue }, io)).toBe(0);
    expect(io.stdout()).toMatch(
      /^scripted: backlog 1 \(1 due, oldest waiting \d+s\), active 0, retrying 0, failed 0$/m,
    );
    expect(io.stdout()).toContain('dead letters: 0\nworkers: 0 live, 0 gone\n');

    const paused = capturedIo(dir);
    await pauseLane('scripted', true, { queue }, paused);
    await pauseLane('scripted', true, { queue }, paused);
    expect(paused.stdout()).toBe('scripted: paused\nscripted: already paused\n');
    const json = capturedIo(dir);
    await showQueue({ queue, json: true }, json);
    expect((JSON.parse(json.stdout()) as { lanes: unknown[] }).lanes).toContainEqual(
      expect.objectContaining({ lane: 'scripted', paused: true, backlog: 1 }),
    );

    const workers = capturedIo(dir);
    expect(await listWorkers({ queue }, workers)).toBe(0);
    expect(workers.stdout()).toMatch(/^lane scripted \(paused\): backlog 1 .*\nno workers\n$/);
  });
});
