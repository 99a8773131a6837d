import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { showAgents } from './agents.js';
import { capturedIo, GATED_PIPELINE, scratchProject } from './testing.js';

describe('troupe agents', () => {
  const root = scratchProject(GATED_PIPELINE);
  // a --file is resolved against the process's directory, as the user's shell would
  const file = join(root, '.troupe', 'p.yaml');

  it('draws the agents as text, or as a Mermaid flowchart', async () => {
    const text = capturedIo(root);
    expect(await showAgents({ file, format: 'text' }, text)).toBe(0);
    expect(text.stdout()).toContain('writer  claude  gate: human');
    const mermaid = capturedIo(root);
    await showAgents({ file, format: 'mermaid' }, mermaid);
    expect(mermaid.stdout()).toMatch(/^flowchart/);
  });

  it('prints the agents as JSON with --json, whatever --format says', async () => {
    const io = capturedIo(root);
    await showAgents({ file, format: 'mermaid', json: true }, io);
    expect(JSON.parse(io.stdout()).map((a: { id: string }) => a.id)).toEqual(['writer']);
  });
});
