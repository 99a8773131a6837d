import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { containedPath } from '../core/contained-path.js';
import { didYouMean, listed } from './closest.js';
import type { DiagnosticSink } from './diagnostics.js';
import { collectAgents, isMapping, type LocatedAgent } from './located-agent.js';
import { substituteParams } from './params.js';
import { AgentListSchema, ImportSchema, PipelineSchema } from './schema.js';
import { checkSchema } from './schema-issues.js';
import { type Path, YamlSource } from './yaml-source.js';

export const OUTSIDE_HINT = 'a pipeline sent through the API can only name files inside the project';

export interface ImportContext {
  /** The importing pipeline's resolved params: imported agents are substituted with them too. */
  params: Record<string, unknown>;
  sink: DiagnosticSink;
  invalid: Set<string>;
  /** Files outside this directory cannot be imported (LoadOptions.within). */
  within?: string;
}

/**
 * The agents of a pipeline document, params substituted and the schema checked: those its
 * `imports` bring (each `from` relative to the file that says it, in import order) first, then
 * its own, as aqm places them. An imported file's own imports are followed; its params are not
 * used. Also returns the substituted document, for its top-level settings.
 */
export function documentAgents(
  document: Record<string, unknown>,
  source: YamlSource,
  context: ImportContext,
  chain: readonly string[] = [source.file],
): { agents: LocatedAgent[]; substituted: Record<string, unknown> } {
  const { params, ...rest } = document;
  const substituted = substitute(rest, source, context) as Record<string, unknown>;
  checkSchema(PipelineSchema, { ...substituted, params }, source, [], context.sink);
  const agents = [
    ...importAgents(substituted.imports, source, context, chain),
    ...collectAgents(substituted.agents, source, ['agents'], context.invalid),
  ];
  return { agents, substituted };
}

function importAgents(
  imports: unknown,
  source: YamlSource,
  context: ImportContext,
  chain: readonly string[],
): LocatedAgent[] {
  const parsed = z.array(ImportSchema).safeParse(imports ?? []);
  if (!parsed.success) return []; // reported by the importing document's schema check
  return parsed.data.flatMap((spec, i) => {
    const at = (...rest: Path) => source.position(['imports', i, ...rest]);
    const file = path.resolve(path.dirname(source.file), spec.from);
    if (chain.includes(file)) {
      const cycle = [...chain, file].map((f) => path.basename(f)).join(' → ');
      context.sink.error(at('from'), `import cycle: ${cycle}`, 'a file cannot import a file that imports it');
      return [];
    }
    if (context.within && containedPath(context.within, file).kind === 'outside') {
      context.sink.error(at('from'), `cannot import "${spec.from}": it is outside the project`, OUTSIDE_HINT);
      return [];
    }
    if (!existsSync(file)) {
      context.sink.error(
        at('from'),
        `cannot import "${spec.from}": no such file (${file})`,
        'paths are relative to the importing file',
      );
      return [];
    }
    const available = agentsOfFile(file, context, [...chain, file]);
    const wanted = spec.agents ?? [];
    if (wanted.length === 0) return available;
    const ids = available.map((a) => a.raw.id);
    const known = new Set(ids);
    wanted.forEach((id, j) => {
      if (!known.has(id) && !context.invalid.has(id)) {
        context.sink.error(
          at('agents', j),
          `"${spec.from}" has no agent "${id}"`,
          didYouMean(id, ids) ?? `it has: ${listed(ids)}`,
        );
      }
    });
    return withAncestors(available, new Set(wanted));
  });
}

/** The agents of a pipeline file or agent list, its own imports followed (`chain`: the files importing it). */
export function agentsOfFile(file: string, context: ImportContext, chain: readonly string[]): LocatedAgent[] {
  const { sink } = context;
  const source = YamlSource.parse(file, readFileSync(file, 'utf8'), sink);
  if (!source) return [];
  const raw = source.value();
  if (Array.isArray(raw)) {
    const agents = substitute(raw, source, context);
    checkSchema(AgentListSchema, agents, source, [], sink);
    return collectAgents(agents, source, [], context.invalid);
  }
  if (!isMapping(raw)) {
    sink.error(
      source.position([]),
      'an imported file must be a pipeline (with `agents:`) or a list of agents',
      'write `- id: …` items at the top level, or under `agents:`',
    );
    return [];
  }
  if (isMapping(raw.params) && Object.keys(raw.params).length > 0) {
    sink.warning(
      source.keyPosition([], 'params'),
      'the params of an imported file are not used',
      'declare them in the importing pipeline; its values are substituted into imported agents',
    );
  }
  return documentAgents(raw, source, context, chain).agents;
}

function substitute(value: unknown, source: YamlSource, { params, sink }: ImportContext): unknown {
  return substituteParams(value, params, {
    error: (at, message, hint) => sink.error(source.position(at), message, hint),
    warning: (at, written, message, hint) => sink.warning(source.positionWithin(at, written), message, hint),
  });
}

/**
 * The wanted agents plus, hidden, the ancestors they extend: importing `security_reviewer` alone
 * must still bring the abstract `base_reviewer` it is built on.
 */
function withAncestors(available: LocatedAgent[], wanted: Set<string>): LocatedAgent[] {
  const byId = new Map(available.map((a) => [a.raw.id, a]));
  const needed = new Set(wanted);
  for (const id of wanted) {
    for (
      let parent = byId.get(id)?.raw.extends;
      parent && !needed.has(parent);
      parent = byId.get(parent)?.raw.extends
    ) {
      needed.add(parent);
    }
  }
  return available
    .filter((a) => needed.has(a.raw.id))
    .map((a) => (wanted.has(a.raw.id) ? a : { ...a, hidden: true }));
}
