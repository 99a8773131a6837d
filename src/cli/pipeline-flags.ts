import type { Command } from 'commander';

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

/** `--interactive` / `--no-interactive`, for the commands that run a task here (run, resume). */
export function addInteractiveOptions(command: Command): Command {
  return command
    .option('--interactive', 'ask here when the task waits for a person (default on a terminal)')
    .option('--no-interactive', 'exit with code 6 when the task waits for a person');
}
