import { openProject } from '../../app/project.js';
import { type AGENT_GRAPH_FORMATS, mermaid, text } from '../agent-graph.js';
import { type CommandIo, writeJson } from '../command-io.js';
import { loadProjectPipeline } from '../options.js';
import type { PipelineOptions } from '../pipeline-flags.js';

export interface AgentsOptions extends PipelineOptions {
  format: (typeof AGENT_GRAPH_FORMATS)[number];
  json?: boolean;
}

/** `troupe agents`: the pipeline's agents and handoffs, drawn or as JSON. */
export async function showAgents(options: AgentsOptions, io: CommandIo): Promise<number> {
  const pipeline = loadProjectPipeline(openProject(io.cwd), options);
  if (options.json || options.format === 'json') writeJson(io, pipeline.agents);
  else io.out(options.format === 'mermaid' ? mermaid(pipeline) : text(pipeline));
  return 0;
}
