import { describe, expect, it } from 'vitest';
import { UsageError } from '../../core/errors.js';
import { testPipeline } from './test.js';
import { capturedIo, SCRIPTED_PAIR, scratchProject } from './testing.js';

const pair = { pipeline: 'pair', input: 'a note', param: [] };

describe('troupe test', () => {
  it('runs the pipeline on its own replies and passes when it completes', async () => {
    const io = capturedIo(scratchProject(SCRIPTED_PAIR));
    expect(await testPipeline(pair, io)).toBe(0);
    expect(io.stdout()).toMatch(/^✓ pair: completed in 2 stages \(T-\w+\): writer → editor\n$/);
  });

  it('fails (exit 1) when the task does not complete, saying why', async () => {
    const io = capturedIo(
      scratchProject({
        ...SCRIPTED_PAIR,
        '.troupe/pipelines/pair.yaml':
          'agents:\n  - id: writer\n    runtime: scripted\n    gate: {type: llm, max_retries: 1}\n',
        '.troupe/scripts/pair.yaml':
          'agents:\n  writer: ["drafted"]\ngates:\n  writer: [{decision: rejected, reason: "too short"}]\n',
      }),
    );
    expect(await testPipeline({ ...pair, json: true }, io)).toBe(1);
    const json = JSON.parse(io.stdout()) as { passed: boolean; status: string };
    expect(json).toMatchObject({ passed: false, status: 'failed' });
    const text = capturedIo(io.cwd);
    expect(await testPipeline(pair, text)).toBe(1);
    expect(text.stdout()).toMatch(/^✗ pair: failed \(T-\w+\): .*too short/);
  });

  it('is a usage error when no script is given and none lies beside the pipeline', async () => {
    const io = capturedIo(
      scratchProject({ '.troupe/pipelines/pair.yaml': SCRIPTED_PAIR['.troupe/pipelines/pair.yaml'] }),
    );
    await expect(testPipeline(pair, io)).rejects.toThrow(UsageError);
  });
});
