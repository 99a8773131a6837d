import { describe, expect, it } from 'vitest';
import { showDecisions } from './decisions.js';
import { capturedIo, GATED_PIPELINE, runScriptedTask, scratchProject } from './testing.js';

describe('troupe decisions', () => {
  it('says there are none yet when no agent is routed automatically', async () => {
    const root = scratchProject(GATED_PIPELINE);
    const id = await runScriptedTask(root);
    const io = capturedIo(root);
    expect(await showDecisions({}, io)).toBe(0);
    expect(io.stdout()).toMatch(/^no routing decisions yet/);
    const json = capturedIo(root);
    await showDecisions({ task: id, json: true }, json);
    expect(JSON.parse(json.stdout())).toEqual({ summary: [], decisions: [] });
  });

  it('refuses a --since that is not a date, and a task that does not exist', async () => {
    const io = capturedIo(scratchProject());
    await expect(showDecisions({ since: 'yesterday-ish' }, io)).rejects.toThrow(
      '--since yesterday-ish is not a date',
    );
    await expect(showDecisions({ task: 'T-000000' }, io)).rejects.toThrow('no task T-000000');
  });
});
