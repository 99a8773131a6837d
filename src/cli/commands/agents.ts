import type { Command } from 'commander';
import { action } from '../action.js';
import { AGENT_GRAPH_FORMATS } from '../agent-graph.js';
import { formatOption } from '../arg-parsers.js';
import { processIo } from '../command-io.js';
import type { AgentsOptions } from '../handlers/agents.js';
import { addPipelineOptions } from '../pipeline-flags.js';

export function registerAgents(program: Command): void {
  addPipelineOptions(
    program.command('agents').description("show a pipeline's agents and handoffs as a graph"),
  )
    .addOption(formatOption(AGENT_GRAPH_FORMATS, 'text'))
    .option('--json', 'print the agents as JSON (as --format json)')
    .action(
      action(async (options: AgentsOptions) =>
        (await import('../handlers/agents.js')).showAgents(options, processIo()),
      ),
    );
}
