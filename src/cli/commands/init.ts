import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { InitOptions } from '../handlers/init.js';

export const DEFAULT_TEMPLATE = 'dev-review-deploy';

export function registerInit(program: Command): void {
  program
    .command('init')
    .description(
      'set up .troupe/ here: finds the agent CLIs of this machine and proposes a team that uses them (optional: every command creates .troupe/ on first use)',
    )
    .option('-n, --name <pipeline>', 'pipeline name', 'default')
    .option(
      '--runtimes <list>',
      'the CLIs of the team, e.g. claude,gemini: the first writes, the second reviews',
    )
    .option('-r, --runtime <runtime>', 'one runtime for every agent (the same as --runtimes with one name)')
    .option(
      '-t, --template <template>',
      'the built-in template to start from (troupe pipeline create --list-templates)',
      DEFAULT_TEMPLATE,
    )
    .option('--from-aqm', "convert this project's .aqm/ (pipelines, params, config) into .troupe/")
    .option(
      '--from-symphony [workflow]',
      'convert a Symphony WORKFLOW.md (default ./WORKFLOW.md) into a pipeline and the tracker settings of `troupe watch`',
    )
    .option('--force', 'overwrite what is already in .troupe/')
    .option('-y, --yes', 'do not ask anything (the default when not on a terminal)')
    .option('--json', 'print what was found and written as JSON')
    .action(
      action(async (options: InitOptions) =>
        (await import('../handlers/init.js')).init(options, processIo()),
      ),
    );
}
