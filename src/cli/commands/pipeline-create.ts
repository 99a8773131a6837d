import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { CreateFlags } from '../handlers/pipeline-create.js';

/** `troupe pipeline create NAME --ai ["…"] | --template T`, and `--list-templates`. */
export function registerPipelineCreate(pipeline: Command): void {
  pipeline
    .command('create')
    .description('write a new pipeline: by an agent from your words (--ai), or from a built-in template')
    .argument('[name]', 'saved as .troupe/pipelines/<name>.yaml')
    .option(
      '--ai [request]',
      'what the team should do: an agent writes the pipeline, troupe validates it (bare --ai: asked on the terminal)',
    )
    .option('-t, --template <template>', 'start from a built-in template (see --list-templates)')
    .option('--list-templates', 'list the built-in templates')
    .option(
      '-r, --runtime <runtime>',
      "--ai: the runtime of the agent that writes it (default: the project's, else claude); --template: put every agent on it",
    )
    .option('--script <file>', '--ai: scripted replies for the writing agent (`agents.author`), offline')
    .option('--force', 'overwrite an existing pipeline of that name')
    .option('-y, --yes', 'save without asking (the default when not on a terminal)')
    .option('--json', 'print {name, file, source, rounds, yaml, saved} as JSON')
    .action(
      action(async (name: string | undefined, flags: CreateFlags) => {
        const { pipelineCreate } = await import('../handlers/pipeline-create.js');
        return pipelineCreate(name, flags, processIo());
      }),
    );
}
