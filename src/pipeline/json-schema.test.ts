import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PIPELINE_SCHEMA_ID, pipelineJsonSchema, pipelineJsonSchemaText } from './json-schema.js';

const committed = new URL('../../schema/pipeline.schema.json', import.meta.url);

describe('schema/pipeline.schema.json', () => {
  it('is what the zod schema generates (run `npm run schema` after changing schema.ts)', () => {
    const onDisk = readFileSync(committed, 'utf8');
    expect(
      onDisk === pipelineJsonSchemaText(),
      'schema/pipeline.schema.json is stale: run `npm run schema`',
    ).toBe(true);
  });

  it('is a draft 2020-12 schema with an id and a title', () => {
    expect(pipelineJsonSchema()).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: PIPELINE_SCHEMA_ID,
      title: 'troupe pipeline (agents.yaml)',
      required: ['agents'],
      additionalProperties: false,
    });
  });

  it('tells editors the defaults and that a command gate needs its command', () => {
    const text = pipelineJsonSchemaText();
    expect(text).toContain('"default": "{{ output }}"');
    expect(text).toContain('"if": {');
  });
});
