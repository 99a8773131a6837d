import { describe, expect, it } from 'vitest';
import { printSchema } from './schema.js';
import { capturedIo, scratchProject } from './testing.js';

describe('troupe schema', () => {
  it('prints the JSON Schema of agents.yaml, or of a spec with --spec', async () => {
    const pipeline = capturedIo(scratchProject());
    expect(await printSchema({}, pipeline)).toBe(0);
    const spec = capturedIo(scratchProject());
    expect(await printSchema({ spec: true }, spec)).toBe(0);
    const [a, b] = [pipeline.stdout(), spec.stdout()].map(
      (text) => JSON.parse(text) as { properties: object },
    );
    expect(Object.keys(a!.properties)).toContain('agents');
    expect(Object.keys(b!.properties)).not.toContain('agents');
  });
});
