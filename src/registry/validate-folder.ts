import type { ProjectConfig } from '../pipeline/config.js';
import { type Diagnostic, validatePipelineFile } from '../pipeline/validate.js';

/**
 * The errors (and agents) of a pipeline file, checked as `troupe validate` checks it with this project's
 * config, and held to its folder: everything it imports or reads (`imports`, `output_schema`)
 * must be inside `folder`, so what is installed or published is complete on its own.
 */
export function checkPipeline(
  file: string,
  folder: string,
  name: string,
  config: ProjectConfig,
): { errors: Diagnostic[]; agentCount: number } {
  const result = validatePipelineFile(file, {
    qa: config.qa,
    gateModel: config.gate.model,
    routingTiers: Object.keys(config.routing?.tiers ?? {}),
    name,
    within: folder,
  });
  return {
    errors: result.diagnostics.filter((d) => d.severity === 'error'),
    agentCount: result.agentCount ?? 0,
  };
}
