import { afterEach, describe, expect, it } from 'vitest';
import type { AgentNode } from '../core/pipeline.js';
import { removeTempDirs, validateYaml } from './test-files.js';

afterEach(removeTempDirs);

const agentOf = (result: ReturnType<typeof validateYaml>, id: string) =>
  result.pipeline?.agents.find((a) => a.id === id) as AgentNode | undefined;

describe('output_schema and spec', () => {
  it('takes an inline schema, and reads a file relative to the pipeline (JSON or YAML)', () => {
    const result = validateYaml(
      `agents:
  - id: a
    runtime: scripted
    spec: required
    output_schema: {type: object, required: [verdict]}
    handoffs: [{to: b}]
  - id: b
    runtime: scripted
    output_schema: schemas/review.json
`,
      { files: { 'schemas/review.json': '{"type": "object", "properties": {"ok": {"type": "boolean"}}}' } },
    );
    expect(result.lines).toEqual([]);
    expect(agentOf(result, 'a')).toMatchObject({
      spec: 'required',
      output_schema: { type: 'object', required: ['verdict'] },
    });
    expect(agentOf(result, 'b')?.output_schema).toEqual({
      type: 'object',
      properties: { ok: { type: 'boolean' } },
    });
  });

  it('reports a missing file and a schema that is not one where output_schema is written', () => {
    const result = validateYaml(`agents:
  - id: a
    runtime: scripted
    output_schema: nope.json
    handoffs: [{to: b}]
  - id: b
    runtime: scripted
    output_schema:
      type: objekt
`);
    expect(result.lines).toEqual([
      expect.stringMatching(/^agents\.yaml:4:20 error: output_schema file `nope\.json` does not exist/),
      expect.stringMatching(
        /^agents\.yaml:9:7 error: output_schema of `b` is not a valid JSON Schema: schema is invalid: data\/type/,
      ),
    ]);
  });

  it('reads a schema file with the limits of the YAML of pipelines: an alias bomb is an error in that file', () => {
    const schema = `description: &d "${'D'.repeat(600_000)}"\nproperties:\n  a: {description: *d}\n  b: {description: *d}\n`;
    const result = validateYaml(
      'agents:\n  - id: a\n    runtime: scripted\n    output_schema: schema.yaml\n',
      {
        files: { 'schema.yaml': schema },
      },
    );
    expect(result.lines).toEqual(['schema.yaml:4:20 error: YAML aliases expand to more than 1 MiB of text']);
  });

  it('refuses a spec value other than required or none', () => {
    const result = validateYaml('agents:\n  - id: a\n    runtime: scripted\n    spec: yes please\n');
    expect(result.lines[0]).toMatch(/^agents\.yaml:4:11 error: /);
  });
});

describe('qa: strict', () => {
  const yaml = (verifier: string) => `agents:
  - id: dev
    runtime: claude
    gate: {type: llm, verifier: qa}
  - id: qa
${verifier}`;

  it('refuses a verifier on the worker’s runtime and model, only when strict', () => {
    const same = yaml('    runtime: claude\n');
    expect(validateYaml(same).lines.filter((l) => l.includes('error'))).toEqual([]);
    expect(validateYaml(same, { qa: 'strict' }).lines).toEqual([
      'agents.yaml:4:33 error: verifier `qa` runs on the same runtime and model as `dev` (claude, default model); qa: strict needs cross-LLM verification',
    ]);
  });

  it('accepts another runtime, or another model on the same runtime', () => {
    for (const verifier of ['    runtime: gemini\n', '    runtime: claude\n    model: opus\n']) {
      const errors = validateYaml(yaml(verifier), { qa: 'strict' }).lines.filter((l) => l.includes('error'));
      expect(errors).toEqual([]);
    }
  });
});
