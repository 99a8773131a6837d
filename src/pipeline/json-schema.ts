import { z } from 'zod';
import { GateSchema, PipelineSchema } from './schema.js';

export const PIPELINE_SCHEMA_ID = 'https://troupe.dev/schema/pipeline.schema.json';

/**
 * The JSON Schema of agents.yaml for editors (yaml-language-server, VS Code), generated from the
 * zod schema so the two cannot drift; `schema/pipeline.schema.json` is this, committed.
 */
export function pipelineJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(PipelineSchema, {
    target: 'draft-2020-12',
    io: 'input',
    override: ({ zodSchema, jsonSchema }) => {
      // the refinement "type command needs a command", which JSON Schema cannot get from zod
      if (zodSchema === GateSchema) {
        jsonSchema.if = { properties: { type: { const: 'command' } }, required: ['type'] };
        // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, not a thenable
        jsonSchema.then = { required: ['command'], properties: { command: { type: 'string' } } };
      }
    },
  });
  const { $schema, ...rest } = schema;
  return {
    $schema,
    $id: PIPELINE_SCHEMA_ID,
    title: 'troupe pipeline (agents.yaml)',
    description: 'A team of AI agents: aqm-format agents.yaml plus troupe additions.',
    ...rest,
  };
}

/** Exactly the text of the committed file: pretty JSON and a trailing newline. */
export function pipelineJsonSchemaText(): string {
  return `${JSON.stringify(pipelineJsonSchema(), null, 2)}\n`;
}
