import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { Project } from '../app/project.js';
import { UsageError } from '../core/errors.js';
import type { Pipeline } from '../core/pipeline.js';
import { GATE_RUNTIMES, type GateRuntime } from '../core/runtimes.js';
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

/**
 * The offline replies a pipeline runs with when no `--script` is given: its own, where `troupe
 * init` and `pipeline create --template` put them (`.troupe/scripts/<pipeline>.yaml`), else the
 * project's `script:`; null when there is neither.
 */
export function projectScriptFile(project: Project, pipelineFile: string): string | null {
  const stem = basename(pipelineFile).replace(/\.ya?ml$/, '');
  const own = join(project.root, '.troupe', 'scripts', `${stem}.yaml`);
  if (existsSync(own)) return own;
  return project.config.script ? resolve(project.root, project.config.script) : null;
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A warning that does not stop the command, on stderr (stdout may be JSON). */
export function printWarning(line: string, hint?: string): void {
  process.stderr.write(`${line}\n${hint ? `  hint: ${hint}\n` : ''}`);
}

/** Asks on the terminal (stderr, so stdout stays the command's output); the trimmed answer. */
export async function ask(question: string): Promise<string> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
  }
}

/** Whether to ask: on a terminal, unless --yes or --json said not to. */
export function interactive(flags: { yes?: boolean; json?: boolean }): boolean {
  return process.stdin.isTTY === true && !flags.yes && !flags.json;
}

/** Runtimes an agent can be put on by name (`command` needs an argv, so it is not one of them). */
export const TEAM_RUNTIMES = GATE_RUNTIMES;
export type TeamRuntime = GateRuntime;

/** `--runtimes claude,gemini` (or one name), each checked. */
export function parseRuntimes(list: string, flag: string): TeamRuntime[] {
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw new UsageError(`${flag} needs at least one runtime`);
  for (const name of names) {
    if (!(TEAM_RUNTIMES as readonly string[]).includes(name))
      throw new UsageError(`${flag}: unknown runtime '${name}'`, {
        hint: `one of ${TEAM_RUNTIMES.join(', ')}`,
      });
  }
  return names as TeamRuntime[];
}

/** A pipeline name troupe saves as `.troupe/pipelines/<name>.yaml`. */
export function checkPipelineName(name: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(name))
    throw new UsageError(`invalid pipeline name '${name}'`, {
      hint: 'pipeline names are letters, digits, - and _',
    });
  return name;
}
