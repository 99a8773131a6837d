import { readFileSync } from 'node:fs';
import path from 'node:path';
import { NotFoundError } from '../core/errors.js';
import type { Pipeline, PipelineNode, WorkspaceSettings } from '../core/pipeline.js';
import { checkReferences } from './check-references.js';
import { checkTemplates } from './check-templates.js';
import type { CompiledPipeline } from './compiled.js';
import { DiagnosticSink, toPipelineError } from './diagnostics.js';
import { resolveExtends } from './extends.js';
import { documentAgents } from './imports.js';
import { isMapping, type LocatedAgent, positionOf } from './located-agent.js';
import { toNode } from './normalize.js';
import { resolveOutputSchemas } from './output-schemas.js';
import {
  findParamsFile,
  type ParamsFile,
  paramDefinitions,
  readParamsFile,
  resolveParams,
} from './params.js';
import { ParamsSchema, WorkspaceSchema } from './schema.js';
import { checkSchema } from './schema-issues.js';
import { withSubPipelines } from './sub-pipelines.js';
import { YamlSource } from './yaml-source.js';

export interface LoadOptions {
  /** `--param k=v` values: they win over the params file and the defaults. */
  params?: Record<string, string>;
  /** `--params-file`; without it `params.yaml` beside the pipeline, then the project's. */
  paramsFile?: string;
  /** The pipeline's name; defaults to the file name without extension. */
  name?: string;
  /**
   * Set for pipelines that come through the HTTP API: the files they name (`imports`,
   * `output_schema`) must be inside this directory, the project's.
   */
  within?: string;
}

export interface CompileOptions extends LoadOptions {
  /** false for validate: a required param nobody has supplied yet is not a defect of the file. */
  requireParams?: boolean;
}

/** Loads a pipeline for running; the first problem is thrown as a PipelineError at its position. */
export function loadPipeline(file: string, opts: LoadOptions = {}): Pipeline {
  return loadPipelineText(readPipelineFile(file), file, opts);
}

export function loadPipelineText(text: string, file: string, opts: LoadOptions = {}): Pipeline {
  const sink = new DiagnosticSink();
  const compiled = compilePipeline(text, file, opts, sink);
  if (!compiled || sink.hasErrors) throw toPipelineError(sink.errors());
  return compiled.pipeline;
}

export function readPipelineFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new NotFoundError(
      `cannot read pipeline ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`,
    );
  }
}

/**
 * aqm's load order with troupe's fixes: parse, resolve params (flag > file > default),
 * substitute `${{ params.X }}` (imported agents too), check the schema, import, extend (any
 * depth), drop abstract agents, normalize, then check references and templates. Every problem
 * goes to `sink`, so that validate can show them all; undefined when nothing usable was built.
 */
export function compilePipeline(
  text: string,
  file: string,
  opts: CompileOptions,
  sink: DiagnosticSink,
): CompiledPipeline | undefined {
  const absolute = file === '<inline>' ? file : path.resolve(file);
  const source = YamlSource.parse(absolute, text, sink);
  if (!source) return undefined;
  const document = source.value();
  if (!isMapping(document)) {
    sink.error(
      source.position([]),
      document === null
        ? 'the pipeline file is empty'
        : 'a pipeline must be a mapping with an `agents:` list',
      'start with `agents:`, a list of agents each with an `id` and a `runtime`',
    );
    return undefined;
  }

  const rawParams = checkSchema(ParamsSchema, document.params ?? {}, source, ['params'], sink);
  if (!rawParams) return undefined;
  const definitions = paramDefinitions(rawParams);
  const params = resolveParams(
    definitions,
    {
      cli: opts.params ?? {},
      file: paramsFileFor(absolute, opts.paramsFile, Object.keys(definitions).length > 0, sink),
      requireValues: opts.requireParams ?? true,
    },
    source,
    sink,
  );
  const invalidIds = new Set<string>();
  const context = { params, sink, invalid: invalidIds, ...(opts.within ? { within: opts.within } : {}) };
  const document_ = documentAgents(document, source, context);
  const { substituted } = document_;
  const { agents, subPipelines } = withSubPipelines(document_.agents, context);
  const written = uniqueIds(agents, sink);
  const extended = resolveExtends(written, sink, invalidIds);
  const abstractIds = new Set(extended.filter((a) => a.raw.abstract).map((a) => a.raw.id));

  const definitionsById = new Map<string, LocatedAgent>();
  const nodes: PipelineNode[] = [];
  for (const agent of extended) {
    if (agent.raw.abstract || agent.hidden) continue;
    const node = toNode(agent, sink);
    if (!node) {
      invalidIds.add(agent.raw.id);
      continue;
    }
    const sub = subPipelines.get(node.id);
    if (sub && node.type === 'agent' && node.plan) {
      node.plan = { ...node.plan, worker: sub.agents[0]!, pipeline: sub };
    }
    nodes.push(node);
    definitionsById.set(node.id, agent);
  }

  const compiled: CompiledPipeline = {
    pipeline: {
      name: opts.name ?? path.basename(absolute).replace(/\.ya?ml$/, ''),
      file: absolute,
      apiVersion: stringOrNull(substituted.apiVersion),
      entry_point: substituted.entry_point === 'auto' ? 'auto' : 'first',
      workspace: workspaceSettings(substituted.workspace),
      budget: budgetSettings(substituted.budget),
      params,
      paramDefinitions: definitions,
      agents: nodes,
    },
    source,
    definitions: definitionsById,
    abstractIds,
    invalidIds,
    writtenAgents:
      agents.filter((a) => a.at.source !== source && !a.hidden && !a.raw.abstract).length +
      (Array.isArray(substituted.agents)
        ? substituted.agents.filter((a) => !isMapping(a) || a.abstract !== true).length
        : 0),
  };
  checkReferences(compiled, sink);
  checkTemplates(compiled, sink);
  resolveOutputSchemas(compiled, sink, opts.within);
  return compiled;
}

function paramsFileFor(
  pipelineFile: string,
  explicit: string | undefined,
  hasParams: boolean,
  sink: DiagnosticSink,
): ParamsFile | undefined {
  // A discovered params.yaml is shared by the pipelines beside it; one without params ignores it.
  if (!hasParams && explicit === undefined) return undefined;
  // '<inline>' resolves into the working directory, which is where its params file would be
  const found = findParamsFile(pipelineFile, explicit);
  return found && readParamsFile(found, sink);
}

/** Drops the second and later agents with an id already used, reporting each. */
function uniqueIds(agents: LocatedAgent[], sink: DiagnosticSink): LocatedAgent[] {
  const first = new Map<string, LocatedAgent>();
  return agents.filter((agent) => {
    const earlier = first.get(agent.raw.id);
    if (!earlier) {
      first.set(agent.raw.id, agent);
      return true;
    }
    const where = positionOf(earlier, 'id');
    sink.error(
      positionOf(agent, 'id'),
      `duplicate agent id \`${agent.raw.id}\``,
      `first defined at ${path.basename(where.file)}:${where.line}:${where.col}`,
    );
    return false;
  });
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** `workspace:` as the engine uses it (the schema has already reported anything invalid). */
function workspaceSettings(raw: unknown): WorkspaceSettings | null {
  const parsed = WorkspaceSchema.safeParse(raw);
  if (!parsed.success || !parsed.data) return null;
  const w = parsed.data;
  return {
    isolation: w.isolation ?? 'worktree',
    base: w.base ?? null,
    merge: w.merge ?? 'on_complete',
    branch_prefix: w.branch_prefix ?? 'troupe/',
    remote: w.remote ?? null,
  };
}

function budgetSettings(raw: unknown): Pipeline['budget'] {
  if (!raw || typeof raw !== 'object') return null;
  const { tokens, usd } = raw as { tokens?: unknown; usd?: unknown };
  return { tokens: typeof tokens === 'number' ? tokens : null, usd: typeof usd === 'number' ? usd : null };
}
