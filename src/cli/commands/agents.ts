import type { Command } from 'commander';
import { action } from '../action.js';
import { mermaid, text } from '../agent-graph.js';
import { formatOption } from '../arg-parsers.js';
import { addPipelineOptions, type PipelineOptions } from '../pipeline-flags.js';

const FORMATS = ['text', 'mermaid', 'json'] as const;

interface AgentsOptions extends PipelineOptions {
  format: (typeof FORMATS)[number];
  json?: boolean;
}

export function registerAgents(program: Command): void {
  addPipelineOptions(
    program.command('agents').description("show a pipeline's agents and handoffs as a graph"),
  )
    .addOption(formatOption(FORMATS, 'text'))
    .option('--json', 'print the agents as JSON (as --format json)')
    .action(
      action(async (options: AgentsOptions) => {
        const { openProject } = await import('../../app/project.js');
        const { loadProjectPipeline, printJson } = await import('../options.js');
        const pipeline = loadProjectPipeline(openProject(), options);
        if (options.json || options.format === 'json') printJson(pipeline.agents);
        else process.stdout.write(options.format === 'mermaid' ? mermaid(pipeline) : text(pipeline));
        return 0;
      }),
    );
}
