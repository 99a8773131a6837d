import { describe, expect, it } from 'vitest';
import { schemaErrors, schemaProblem } from './json-schema-check.js';

describe('JSON Schema checks (ajv)', () => {
  const schema = {
    type: 'object',
    required: ['verdict'],
    properties: { verdict: { enum: ['ship', 'hold'] }, score: { type: 'number' } },
  };

  it('accepts a valid object and names each problem of an invalid one', () => {
    expect(schemaErrors(schema, { verdict: 'ship', score: 3 })).toEqual([]);
    expect(schemaErrors(schema, { verdict: 'maybe', score: 'high' })).toEqual([
      'verdict must be equal to one of the allowed values: "ship", "hold"',
      'score must be number',
    ]);
    expect(schemaErrors(schema, {})).toEqual(["(the object) must have required property 'verdict'"]);
  });

  it('reports a schema that is not one: a wrong type name, an unknown keyword, not a mapping', () => {
    expect(schemaProblem(schema)).toBeNull();
    expect(schemaProblem({ type: 'objekt' })).toMatch(/schema is invalid/);
    expect(schemaProblem({ type: 'object', propertiez: {} })).toMatch(/unknown keyword: "propertiez"/);
    expect(schemaProblem(['type'])).toMatch(/is a mapping/);
  });

  it('follows $schema: draft 2020-12 keywords work', () => {
    const s2020 = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'array',
      prefixItems: [{ type: 'string' }],
    };
    expect(schemaProblem(s2020)).toBeNull();
    expect(schemaErrors(s2020, [1])).toEqual(['[0] must be string']);
  });
});
