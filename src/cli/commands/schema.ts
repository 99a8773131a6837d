import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { SchemaOptions } from '../handlers/schema.js';

export function registerSchema(program: Command): void {
  program
    .command('schema')
    .description('print the JSON Schema of agents.yaml (for editors)')
    .option('--spec', 'print the JSON Schema of a spec (`spec: required`) instead')
    .option('--plan', 'print the JSON Schema of a plan (an agent with `plan:`) instead')
    .action(
      action(async (options: SchemaOptions) => {
        const { printSchema } = await import('../handlers/schema.js');
        return printSchema(options, processIo());
      }),
    );
}
