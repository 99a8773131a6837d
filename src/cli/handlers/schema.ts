import { UsageError } from '../../core/errors.js';
import { pipelineJsonSchemaText } from '../../pipeline/json-schema.js';
import { planJsonSchemaText } from '../../pipeline/lang/plan.js';
import { specJsonSchemaText } from '../../pipeline/lang/spec.js';
import type { CommandIo } from '../command-io.js';

export interface SchemaOptions {
  spec?: boolean;
  plan?: boolean;
}

/** `troupe schema [--spec | --plan]`: the JSON Schema of agents.yaml, of a spec, or of a plan. */
export async function printSchema(options: SchemaOptions, io: CommandIo): Promise<number> {
  if (options.spec && options.plan) throw new UsageError('--spec and --plan name two schemas: give one');
  io.out(
    options.spec ? specJsonSchemaText() : options.plan ? planJsonSchemaText() : pipelineJsonSchemaText(),
  );
  return 0;
}
