import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { NotFoundError, UsageError } from '../core/errors.js';
import { loadProjectConfig, type ProjectConfig } from './config.js';

/** troupe's own directory first; aqm's is read as-is so aqm projects work unchanged. */
const PROJECT_DIRS = ['.troupe', '.aqm'] as const;
const PIPELINE_FILE = /^(?<name>.+)\.ya?ml$/;
const PIPELINE_NAME = /^[\w.-]+$/;

export interface PipelineLocation {
  file: string;
  name: string;
}

export interface PipelineEntry extends PipelineLocation {
  isDefault: boolean;
}

/**
 * The nearest ancestor holding `.troupe/` or `.aqm/`; else the top of the enclosing git
 * repository; else `cwd` itself.
 */
export function findProjectRoot(cwd: string): string {
  const start = path.resolve(cwd);
  const found =
    ancestorWhere(start, (dir) => PROJECT_DIRS.some((d) => isDirectory(path.join(dir, d)))) ??
    ancestorWhere(start, (dir) => existsSync(path.join(dir, '.git')));
  return found ?? start;
}

/**
 * Which pipeline file to use: `--file`, else `--pipeline NAME` in `.troupe/pipelines/` then
 * `.aqm/pipelines/`; with neither, the configured default, then `agents.yaml`, then a
 * `default` pipeline or the only one there is.
 */
export function resolvePipeline(
  root: string,
  choice: { file?: string; pipeline?: string },
  config: Pick<ProjectConfig, 'default_pipeline'>,
): PipelineLocation {
  if (choice.file !== undefined) {
    const file = path.resolve(choice.file);
    if (!isFile(file)) throw new NotFoundError(`pipeline file not found: ${choice.file}`);
    return { file, name: givenFileName(root, file) };
  }
  if (choice.pipeline !== undefined)
    return namedOrThrow(root, choice.pipeline, `no pipeline named "${choice.pipeline}"`);
  if (config.default_pipeline) {
    return namedOrThrow(
      root,
      config.default_pipeline,
      `the default pipeline "${config.default_pipeline}" (default_pipeline in config.yaml) does not exist`,
    );
  }
  for (const dir of PROJECT_DIRS) {
    const file = path.join(root, dir, 'agents.yaml');
    if (isFile(file)) return { file, name: nameOf(file) };
  }
  const all = pipelineFiles(root);
  const chosen = all.find((p) => p.name === 'default') ?? (all.length === 1 ? all[0] : undefined);
  if (chosen) return chosen;
  if (all.length === 0) {
    throw new NotFoundError(`no pipeline found in ${root}`, {
      hint: `looked for ${PROJECT_DIRS.map((d) => `${d}/agents.yaml`).join(', ')} and ${PROJECT_DIRS.map((d) => `${d}/pipelines/*.yaml`).join(', ')}; pass --file PATH or create one`,
    });
  }
  throw new NotFoundError(`several pipelines and no default: ${all.map((p) => p.name).join(', ')}`, {
    hint: 'choose one with --pipeline NAME, or set default_pipeline in .troupe/config.yaml',
  });
}

/**
 * The pipelines in `.troupe/pipelines/` and `.aqm/pipelines/` (troupe's wins a name clash), and
 * an `agents.yaml` as "agents"; `isDefault` marks the one used when no name is given.
 */
export function listPipelines(
  root: string,
  config: ProjectConfig = loadProjectConfig(root),
): PipelineEntry[] {
  const defaultFile = defaultPipelineFile(root, config);
  return pipelineFiles(root).map((p) => ({ ...p, isDefault: p.file === defaultFile }));
}

function defaultPipelineFile(root: string, config: ProjectConfig): string | undefined {
  try {
    return resolvePipeline(root, {}, config).file;
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

function namedOrThrow(root: string, name: string, message: string): PipelineLocation {
  if (!PIPELINE_NAME.test(name) || name.startsWith('.')) {
    throw new UsageError(`invalid pipeline name "${name}"`, {
      hint: 'a name is letters, digits, ., _ and -',
    });
  }
  const found = pipelineFiles(root).find((p) => p.name === name);
  if (found) return found;
  const available = pipelineFiles(root).map((p) => p.name);
  throw new NotFoundError(message, {
    hint: `looked for ${PROJECT_DIRS.map((d) => path.join(d, 'pipelines', `${name}.yaml`)).join(' and ')} in ${root}${available.length ? `; available: ${available.join(', ')}` : ''}`,
  });
}

/** The project's pipeline of that name (as `--pipeline NAME` finds it), or null. */
export function findNamedPipeline(root: string, name: string): PipelineLocation | null {
  if (!PIPELINE_NAME.test(name) || name.startsWith('.')) return null;
  return pipelineFiles(root).find((p) => p.name === name) ?? null;
}

/** The names of the project's pipelines. */
export function pipelineNames(root: string): string[] {
  return pipelineFiles(root).map((p) => p.name);
}

/** Named pipelines, then each project dir's `agents.yaml` (as "agents") unless the name is taken. */
function pipelineFiles(root: string): PipelineLocation[] {
  const byName = new Map<string, PipelineLocation>();
  for (const dir of PROJECT_DIRS) {
    const pipelinesDir = path.join(root, dir, 'pipelines');
    if (!isDirectory(pipelinesDir)) continue;
    for (const entry of readdirSync(pipelinesDir).sort()) {
      const name = PIPELINE_FILE.exec(entry)?.groups?.name;
      const file = path.join(pipelinesDir, entry);
      // params.yaml holds param values for the pipelines beside it; aqm listed it as a pipeline.
      if (name && name !== 'params' && !byName.has(name) && isFile(file)) byName.set(name, { file, name });
    }
    // a pipeline installed by `troupe pull` is a folder: <name>/agents.yaml (docs/registry.md)
    for (const entry of readdirSync(pipelinesDir).sort()) {
      const folder = path.join(pipelinesDir, entry);
      const file = path.join(folder, 'agents.yaml');
      if (entry.startsWith('.') || !PIPELINE_NAME.test(entry) || byName.has(entry)) continue;
      if (isDirectory(folder) && isFile(file)) {
        byName.set(entry, { file, name: entry });
      }
    }
  }
  for (const dir of PROJECT_DIRS) {
    const file = path.join(root, dir, 'agents.yaml');
    if (!byName.has('agents') && isFile(file)) byName.set('agents', { file, name: 'agents' });
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * A `--file`'s name: the project's own name for it when it is one of its pipelines, else the
 * file's name; an `agents.yaml` elsewhere says nothing, so it is named by its folder
 * (`examples/dev-team/agents.yaml` is dev-team, `../app/.troupe/agents.yaml` is app).
 */
function givenFileName(root: string, file: string): string {
  const known = pipelineFiles(root).find((p) => p.file === file);
  if (known) return known.name;
  const name = nameOf(file);
  if (name !== 'agents') return name;
  let dir = path.dirname(file);
  if ((PROJECT_DIRS as readonly string[]).includes(path.basename(dir))) dir = path.dirname(dir);
  return path.basename(dir) || name;
}

function nameOf(file: string): string {
  return path.basename(file).replace(/\.ya?ml$/, '');
}

function ancestorWhere(start: string, test: (dir: string) => boolean): string | undefined {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (test(dir)) return dir;
    if (path.dirname(dir) === dir) return undefined;
  }
}

function isDirectory(p: string): boolean {
  return statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

function isFile(p: string): boolean {
  return statSync(p, { throwIfNoEntry: false })?.isFile() ?? false;
}
