import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { action } from '../action.js';
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
        const { openProject } = await import('../../app/project.js');
        const { listPipelines } = await import('../../pipeline/discover.js');
        const { printJson } = await import('../options.js');
        const project = openProject();
        const list = listPipelines(project.root, project.config);
        if (options.json) printJson(list);
        else if (list.length === 0) process.stdout.write('no pipelines; create one with `troupe init`\n');
        else
          for (const p of list)
            process.stdout.write(`${p.isDefault ? '*' : ' '} ${p.name.padEnd(20)} ${p.file}\n`);
        return 0;
      }),
    );
  pipeline
    .command('show')
    .description("print a pipeline's YAML")
    .argument('[name]', 'pipeline name (default: the default pipeline)')
    .action(
      action(async (name?: string) => {
        const { openProject } = await import('../../app/project.js');
        const { resolvePipeline } = await import('../../pipeline/discover.js');
        const project = openProject();
        const found = resolvePipeline(project.root, { pipeline: name }, project.config);
        process.stdout.write(readFileSync(found.file, 'utf8'));
        return 0;
      }),
    );
  pipeline
    .command('default')
    .description('show or set the default pipeline')
    .argument('[name]', 'make this the default')
    .action(
      action(async (name?: string) => {
        const { openProject } = await import('../../app/project.js');
        const { resolvePipeline } = await import('../../pipeline/discover.js');
        const { saveDefaultPipeline } = await import('../../pipeline/config.js');
        const project = openProject();
        if (name) {
          resolvePipeline(project.root, { pipeline: name }, project.config);
          saveDefaultPipeline(project.root, name);
          process.stdout.write(`default pipeline: ${name}\n`);
        } else {
          const found = resolvePipeline(project.root, {}, project.config);
          process.stdout.write(`${found.name}\n`);
        }
        return 0;
      }),
    );
  registerPipelineVersions(pipeline);
}
