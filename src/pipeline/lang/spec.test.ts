import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTaskSize } from '../../core/spec.js';
import { needsSpec, SPEC_JSON_SCHEMA, specJsonSchemaText, specVariable } from './spec.js';
import { renderTemplate } from './template.js';

describe('schema/spec.schema.json', () => {
  it('is SPEC_JSON_SCHEMA (run `npm run schema` after changing spec.ts)', () => {
    const onDisk = readFileSync(new URL('../../../schema/spec.schema.json', import.meta.url), 'utf8');
    expect(onDisk === specJsonSchemaText(), 'schema/spec.schema.json is stale: run `npm run schema`').toBe(
      true,
    );
  });

  it('requires requirements, files and verification', () => {
    expect(SPEC_JSON_SCHEMA.required).toEqual(['requirements', 'files', 'verification']);
  });
});

describe('task sizes', () => {
  it('reads S, M, L, XL in any case, and nothing else', () => {
    expect(['s', 'M', ' l ', 'xl'].map(parseTaskSize)).toEqual(['S', 'M', 'L', 'XL']);
    expect(parseTaskSize('XXL')).toBeNull();
    expect(parseTaskSize('')).toBeNull();
  });

  it('needs a spec from M up, not for S or an unsized task', () => {
    expect([null, 'S', 'M', 'L', 'XL'].map((s) => needsSpec(s as never))).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
  });
});

describe('{{ spec }}', () => {
  const spec = {
    requirements: ['GET /health returns 200'],
    files: ['src/health.ts'],
    verification: ['npm test'],
  };

  it('renders as pretty JSON, and its fields stay reachable', () => {
    const vars = { spec: specVariable(spec) };
    expect(renderTemplate('{{ spec }}', vars, 't')).toBe(JSON.stringify(spec, null, 2));
    expect(renderTemplate('{% for r in spec.requirements %}[{{ r }}]{% endfor %}', vars, 't')).toBe(
      '[GET /health returns 200]',
    );
  });

  it('is empty when the task has no spec', () => {
    expect(renderTemplate('<{{ spec }}>', { spec: specVariable(null) }, 't')).toBe('<>');
  });
});
