import type { Spec, TaskSize } from '../../core/spec.js';

/**
 * Task sizes and the spec an agent with `spec: required` writes before M-or-larger work (AOa's
 * pre-task spec gate): what must be true, which files it expects to touch, how to check it.
 */

/** Specs are required from M up; S (or no size at all) goes without one. */
export function needsSpec(size: TaskSize | null): boolean {
  return size !== null && size !== 'S';
}

export const SPEC_SCHEMA_ID = 'https://troupe.dev/schema/spec.schema.json';

/** What a spec must look like; `schema/spec.schema.json` is this, committed (a test checks). */
export const SPEC_JSON_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: SPEC_SCHEMA_ID,
  title: 'troupe spec',
  description:
    'The spec an agent with `spec: required` writes (as a JSON object in its output) before work of size M or larger.',
  type: 'object',
  required: ['requirements', 'files', 'verification'],
  properties: {
    requirements: {
      description: 'What must be true when the work is done, one statement each.',
      type: 'array',
      minItems: 1,
      items: { type: 'string', minLength: 1 },
    },
    files: {
      description: 'Paths the work is expected to create or change.',
      type: 'array',
      items: { type: 'string', minLength: 1 },
    },
    verification: {
      description: 'Commands or checks that show the requirements are met.',
      type: 'array',
      items: { type: 'string', minLength: 1 },
    },
  },
} as const;

export function specJsonSchemaText(): string {
  return `${JSON.stringify(SPEC_JSON_SCHEMA, null, 2)}\n`;
}

/**
 * `{{ spec }}` in a template: the spec as pretty JSON, while `{{ spec.requirements }}` and
 * `{% for r in spec.requirements %}` still reach its fields. "" when the task has none.
 */
export function specVariable(spec: Spec | null): unknown {
  if (!spec) return '';
  const text = JSON.stringify(spec, null, 2);
  const value = { ...spec };
  Object.defineProperty(value, 'toString', { value: () => text, enumerable: false });
  return value;
}
