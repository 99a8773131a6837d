import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { resolvePipeline } from '../pipeline/discover.js';
import { loadPipeline } from '../pipeline/load.js';
import type { Pipeline } from '../pipeline/types.js';
import type { Project } from './project.js';

/** Flags shared by the commands that load a pipeline. */
export interface PipelineOptions {
  pipeline?: string;
  file?: string;
  param?: string[];
  paramsFile?: string;
}

export function addPipelineOptions(command: Command): Command {
  return command
    .option('-P, --pipeline <name>', 'pipeline name (.troupe/pipelines/<name>.yaml)')
    .option('-f, --file <path>', 'pipeline file')
    .option('-p, --param <key=value>', 'set a pipeline param (repeatable)', collect, [])
    .option('--params-file <path>', 'YAML file of param values');
}

export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

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
