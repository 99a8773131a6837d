import type { Command } from 'commander';
import { action } from '../action.js';

export function registerSchema(program: Command): void {
  program
    .command('schema')
    .description('print the JSON Schema of agents.yaml (for editors)')
    .action(
      action(async () => {
        const { pipelineJsonSchemaText } = await import('../../pipeline/json-schema.js');
        process.stdout.write(pipelineJsonSchemaText());
        return 0;
      }),
    );
}
