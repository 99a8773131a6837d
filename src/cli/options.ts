import type { Project } from '../app/project.js';
import { UsageError } from '../core/errors.js';
import type { Pipeline } from '../core/pipeline.js';
import { resolvePipeline } from '../pipeline/discover.js';
import { loadPipeline } from '../pipeline/load.js';
import type { PipelineOptions } from './pipeline-flags.js';

export function parseParams(pairs: string[] = []): Record<string, string> {
  const params: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--param expects key=value, got '${pair}'`);
    params[pair.slice(0, eq).trim()] = pair.slice(eq + 1);
  }
  return params;
}

export function loadProjectPipeline(project: Project, options: PipelineOptions): Pipeline {
  const found = resolvePipeline(
    project.root,
    { file: options.file, pipeline: options.pipeline },
    project.config,
  );
  return loadPipeline(found.file, {
    params: parseParams(options.param),
    ...(options.paramsFile ? { paramsFile: options.paramsFile } : {}),
    name: found.name,
  });
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A warning that does not stop the command, on stderr (stdout may be JSON). */
export function printWarning(line: string, hint?: string): void {
  process.stderr.write(`${line}\n${hint ? `  hint: ${hint}\n` : ''}`);
}
