import { pipelineJsonSchemaText } from '../../pipeline/json-schema.js';
import { specJsonSchemaText } from '../../pipeline/lang/spec.js';
import type { CommandIo } from '../command-io.js';

export interface SchemaOptions {
  spec?: boolean;
}

/** `troupe schema [--spec]`: the JSON Schema of agents.yaml, or of a spec. */
export async function printSchema(options: SchemaOptions, io: CommandIo): Promise<number> {
  io.out(options.spec ? specJsonSchemaText() : pipelineJsonSchemaText());
  return 0;
}
