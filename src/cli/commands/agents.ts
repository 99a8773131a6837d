import type { Command } from 'commander';
import type { Pipeline } from '../../core/pipeline.js';
import { action } from '../action.js';
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

export function text(pipeline: Pipeline): string {
  const lines = [`${pipeline.name} (${pipeline.file})`];
  for (const node of pipeline.agents) {
    const what =
      node.type === 'session'
        ? `session [${node.participants.join(', ')}]${node.summary_agent ? ` summary: ${node.summary_agent}` : ''}`
        : `${node.runtime}${node.model ? `/${node.model}` : ''}${node.gate ? `  gate: ${node.gate.type}` : ''}`;
    lines.push(`${node.id}  ${what}`);
    for (const h of node.handoffs) lines.push(`  → ${h.to.join(', ')} (${h.condition})`);
  }
  return `${lines.join('\n')}\n`;
}

export function mermaid(pipeline: Pipeline): string {
  const lines = ['flowchart TD'];
  for (const node of pipeline.agents) {
    const label = node.type === 'session' ? `${node.id} (session)` : `${node.id}<br/>${node.runtime}`;
    lines.push(node.type === 'session' ? `  ${node.id}{{"${label}"}}` : `  ${node.id}["${label}"]`);
    if (node.type === 'session') for (const p of node.participants) lines.push(`  ${node.id} -.- ${p}`);
    for (const h of node.handoffs) {
      for (const to of h.to) {
        const target = to === '*' ? 'any' : to;
        lines.push(
          h.condition === 'always'
            ? `  ${node.id} --> ${target}`
            : `  ${node.id} -->|${h.condition.replace(/"/g, "'")}| ${target}`,
        );
      }
    }
  }
  return `${lines.join('\n')}\n`;
}
