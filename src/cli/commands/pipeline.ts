import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import { registerPipelineCreate } from './pipeline-create.js';
import { registerPipelineVersions } from './registry.js';

export function registerPipeline(program: Command): void {
  const pipeline = program.command('pipeline').description('the pipelines of this project');
  registerPipelineCreate(pipeline);
  pipeline
    .command('list')
    .description('list pipelines (.troupe/pipelines, .aqm/pipelines, agents.yaml)')
    .option('--json', 'print JSON')
    .action(
      action(async (options: { json?: boolean }) => {
        const { listProjectPipelines } = await import('../handlers/pipeline.js');
        return listProjectPipelines(options, processIo());
      }),
    );
  pipeline
    .command('show')
    .description("print a pipeline's YAML")
    .argument('[name]', 'pipeline name (default: the default pipeline)')
    .action(
      action(async (name?: string) => {
        const { showPipeline } = await import('../handlers/pipeline.js');
        return showPipeline(name, processIo());
      }),
    );
  pipeline
    .command('default')
    .description('show or set the default pipeline')
    .argument('[name]', 'make this the default')
    .action(
      action(async (name?: string) => {
        const { defaultPipeline } = await import('../handlers/pipeline.js');
        return defaultPipeline(name, processIo());
      }),
    );
  registerPipelineVersions(pipeline);
}
