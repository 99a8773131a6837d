import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../core/errors.js';
import { defaultPipeline, listProjectPipelines, showPipeline } from './pipeline.js';
import { capturedIo, SCRIPTED_PAIR, scratchProject } from './testing.js';

const solo = 'agents:\n  - id: solo\n    runtime: scripted\n';

describe('troupe pipeline list / show / default', () => {
  it("lists the project's pipelines, shows one, and moves the default", async () => {
    const dir = scratchProject({ ...SCRIPTED_PAIR, '.troupe/pipelines/solo.yaml': solo });
    const listed = capturedIo(dir);
    expect(await listProjectPipelines({ json: true }, listed)).toBe(0);
    expect((JSON.parse(listed.stdout()) as Array<{ name: string }>).map((p) => p.name).sort()).toEqual([
      'pair',
      'solo',
    ]);

    const shown = capturedIo(dir);
    expect(await showPipeline('solo', shown)).toBe(0);
    expect(shown.stdout()).toBe(solo);

    const set = capturedIo(dir);
    expect(await defaultPipeline('solo', set)).toBe(0);
    expect(set.stdout()).toBe('default pipeline: solo\n');
    const read = capturedIo(dir);
    await defaultPipeline(undefined, read);
    expect(read.stdout()).toBe('solo\n');
    const text = capturedIo(dir);
    await listProjectPipelines({}, text);
    expect(text.stdout()).toMatch(/^\* solo {17}/m);
  });

  it('says how to start when there is no pipeline, and refuses an unknown default', async () => {
    const dir = scratchProject();
    const io = capturedIo(dir);
    await listProjectPipelines({}, io);
    expect(io.stdout()).toBe('no pipelines; create one with `troupe init`\n');
    await expect(defaultPipeline('nosuch', io)).rejects.toThrow(NotFoundError);
  });
});
