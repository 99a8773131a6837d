import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isMap, isScalar, isSeq, parseDocument } from 'yaml';
import { NotFoundError } from '../core/errors.js';
import type { Pipeline } from '../core/pipeline.js';
import { packageRoot } from '../package-root.js';
import { listed } from './closest.js';
import { type ValidateOptions, validatePipelineText } from './validate.js';

/**
 * The built-in pipelines `troupe pipeline create --template` and `troupe init` start from: the
 * package's `templates/<name>/agents.yaml` (first comment line: its description) and
 * `script.yaml` beside it (offline replies that run it to the end).
 */
export interface PipelineTemplate {
  name: string;
  description: string;
  file: string;
  script: string;
}

/** In a template, these runtimes mark the seats: who writes, who reviews. */
export const WRITER_SEAT = 'claude';
export const REVIEWER_SEAT = 'gemini';

export function templatesDir(): string {
  return path.join(packageRoot(), 'templates');
}

export function listTemplates(dir = templatesDir()): PipelineTemplate[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(dir, entry.name, 'agents.yaml')))
    .map((entry) => templateAt(dir, entry.name))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export function findTemplate(name: string, dir = templatesDir()): PipelineTemplate {
  const all = listTemplates(dir);
  const found = all.find((t) => t.name === name);
  if (found) return found;
  throw new NotFoundError(`no template named "${name}"`, {
    hint: `templates: ${listed(all.map((t) => t.name))}`,
  });
}

function templateAt(dir: string, name: string): PipelineTemplate {
  const file = path.join(dir, name, 'agents.yaml');
  const first = readFileSync(file, 'utf8').split('\n', 1)[0] ?? '';
  return {
    name,
    description: first.startsWith('#') ? first.replace(/^#\s*/, '') : '',
    file,
    script: path.join(dir, name, 'script.yaml'),
  };
}

/**
 * The template's YAML with its seats filled: every agent (and gate) on the writer's seat gets
 * `writer`, on the reviewer's seat `reviewer`. Only those values change: the text around them
 * (comments, layout) is kept byte for byte.
 */
export function castTemplate(text: string, team: { writer: string; reviewer: string }): string {
  const doc = parseDocument(text);
  const edits: Array<{ start: number; end: number; value: string }> = [];
  const seat = (node: unknown) => {
    if (!isMap(node)) return;
    const runtime = node.get('runtime', true);
    if (!isScalar(runtime) || !runtime.range) return;
    const value =
      runtime.value === WRITER_SEAT ? team.writer : runtime.value === REVIEWER_SEAT ? team.reviewer : null;
    if (value !== null) edits.push({ start: runtime.range[0], end: runtime.range[1], value });
  };
  const agents = doc.get('agents', true);
  for (const agent of isSeq(agents) ? agents.items : []) {
    seat(agent);
    if (isMap(agent)) seat(agent.get('gate', true));
  }
  let cast = text;
  for (const edit of edits.sort((a, b) => b.start - a.start))
    cast = cast.slice(0, edit.start) + edit.value + cast.slice(edit.end);
  return cast;
}

/** A template as it will be saved at `file`, cast onto `team` (as written without one), validated there. */
export function templatePipeline(
  template: PipelineTemplate,
  file: string,
  options: { team?: { writer: string; reviewer: string }; validate?: ValidateOptions } = {},
): { yaml: string; pipeline: Pipeline } {
  const text = readFileSync(template.file, 'utf8');
  const yaml = options.team ? castTemplate(text, options.team) : text;
  const checked = validatePipelineText(yaml, file, options.validate);
  if (!checked.pipeline) throw new Error(`template ${template.name} does not validate as ${file}`);
  return { yaml, pipeline: checked.pipeline };
}
