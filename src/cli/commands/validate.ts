import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { ValidateFlags } from '../handlers/validate.js';
import { collect } from '../pipeline-flags.js';

export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description('check a pipeline: YAML, schema, references, conditions, templates, runtimes')
    .argument('[path]', 'pipeline file, or project directory to find it in (default: discover from here)')
    .option('-f, --file <path>', 'pipeline file (the same as PATH, as in the other commands)')
    .option('-P, --pipeline <name>', 'pipeline name (.troupe/pipelines/<name>.yaml)')
    .option('--strict', 'treat warnings as errors (exit 2)')
    .option('--json', 'print {valid, errors, warnings, summary} as JSON')
    .option('-p, --param <key=value>', 'a param value to validate with (repeatable)', collect, [])
    .option('--params-file <path>', 'YAML file of param values')
    .action(
      action(async (target: string | undefined, flags: ValidateFlags) => {
        const { validate } = await import('../handlers/validate.js');
        return validate(target, flags, processIo());
      }),
    );
}
