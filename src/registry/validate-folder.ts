import type { ProjectConfig } from '../pipeline/config.js';
import { type Diagnostic, validatePipelineFile } from '../pipeline/validate.js';

/**
 * The errors of a pipeline file, checked as `troupe validate` checks it with this project's
 * config, and held to its folder: everything it imports or reads (`imports`, `output_schema`)
 * must be inside `folder`, so what is installed or published is complete on its own.
 */
export function pipelineErrors(
  file: string,
  folder: string,
  name: string,
  config: ProjectConfig,
): Diagnostic[] {
  const result = validatePipelineFile(file, {
    qa: config.qa,
    gateModel: config.gate.model,
    routingTiers: Object.keys(config.routing?.tiers ?? {}),
    name,
    within: folder,
  });
  return result.diagnostics.filter((d) => d.severity === 'error');
}
