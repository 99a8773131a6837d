import { describe, expect, it } from 'vitest';
import { showContext } from './context.js';
import { capturedIo, runScriptedTask, scratchProject } from './testing.js';

describe('troupe context', () => {
  it("prints the task's context.md, and with --json its agents' notes too", async () => {
    const root = scratchProject({
      'one.yaml': 'agents:\n  - id: writer\n    runtime: claude\n    system_prompt: "{{ input }}"\n',
      'one-script.yaml': 'agents:\n  writer: ["the draft"]\n',
    });
    const id = await runScriptedTask(root, { pipeline: 'one.yaml', script: 'one-script.yaml' });
    const text = capturedIo(root);
    await showContext(id, {}, text);
    expect(text.stdout()).toContain('the draft');

    const json = capturedIo(root);
    await showContext(id, { json: true }, json);
    expect(JSON.parse(json.stdout())).toEqual({ id, context: text.stdout(), agents: expect.any(Object) });
  });
});
