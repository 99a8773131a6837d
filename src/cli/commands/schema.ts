import type { Command } from 'commander';
import { action } from '../action.js';

export function registerSchema(program: Command): void {
  program
    .command('schema')
    .description('print the JSON Schema of agents.yaml (for editors)')
    .option('--spec', 'print the JSON Schema of a spec (`spec: required`) instead')
    .action(
      action(async (options: { spec?: boolean }) => {
        if (options.spec) {
          const { specJsonSchemaText } = await import('../../pipeline/lang/spec.js');
          process.stdout.write(specJsonSchemaText());
          return 0;
        }
        const { pipelineJsonSchemaText } = await import('../../pipeline/json-schema.js');
        process.stdout.write(pipelineJsonSchemaText());
        return 0;
      }),
    );
}
