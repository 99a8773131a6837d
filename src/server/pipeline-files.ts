import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { containedPath } from '../core/contained-path.js';
import type { Pipeline } from '../core/pipeline.js';
import { loadProjectConfig } from '../pipeline/config.js';
import { type Diagnostic, DiagnosticSink } from '../pipeline/diagnostics.js';
import { listPipelines, type PipelineEntry } from '../pipeline/discover.js';
import { lintPipeline } from '../pipeline/lint.js';
import { compilePipeline } from '../pipeline/load.js';
import type { Graph, GraphEdge, GraphNode } from './api/pipelines.js';
import { ApiError } from './errors.js';

/** Pipelines as files: find, read, check text before it is saved, save. */

const NAME = /^[\w][\w.-]*$/;

/** The project's pipelines, less any that is a symlink to a file outside it. */
export function pipelineEntries(root: string): PipelineEntry[] {
  return listPipelines(root, loadProjectConfig(root)).filter(
    (p) => containedPath(root, p.file).kind === 'inside',
  );
}

export function findPipeline(root: string, name: string): PipelineEntry {
  const entry = pipelineEntries(root).find((p) => p.name === name);
  if (!entry) throw new ApiError(404, 'not_found', `no pipeline named "${name}"`);
  return entry;
}

export function checkName(name: string): void {
  if (!NAME.test(name) || name === 'params') {
    throw new ApiError(
      400,
      'bad_request',
      `invalid pipeline name "${name}": use letters, digits, ., _ and -`,
    );
  }
}

/** Where a new pipeline of that name is written. */
export function newPipelineFile(root: string, name: string): string {
  return path.join(root, '.troupe', 'pipelines', `${name}.yaml`);
}

export interface TextCheck {
  pipeline?: Pipeline;
  diagnostics: Diagnostic[];
}

/**
 * Every problem of pipeline text as if it were the file `file` (imports resolve beside it, and
 * must be inside the project, as every file a pipeline of the API names).
 */
export function checkPipelineText(root: string, text: string, file: string, name: string): TextCheck {
  const sink = new DiagnosticSink();
  const compiled = compilePipeline(text, file, { requireParams: false, name, within: root }, sink);
  if (compiled && !sink.hasErrors) lintPipeline(compiled, sink);
  return {
    ...(compiled && !sink.hasErrors ? { pipeline: compiled.pipeline } : {}),
    diagnostics: sink.list(),
  };
}

/** Diagnostics as the API shows them: file relative to the project, `main` when it is this file. */
export function diagnosticsJson(diagnostics: Diagnostic[], root: string, file: string) {
  return diagnostics.map((d) => ({
    severity: d.severity,
    file: d.file === file ? null : path.relative(root, d.file),
    line: d.line,
    col: d.col,
    message: d.message,
    ...(d.hint ? { hint: d.hint } : {}),
  }));
}

export function readPipeline(entry: PipelineEntry): string {
  return readFileSync(entry.file, 'utf8');
}

/** Writes through a temporary file, so a crash never leaves half a pipeline. */
export function writePipeline(file: string, content: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, content);
  renameSync(temp, file);
}

export function pipelineExists(root: string, name: string): boolean {
  return pipelineEntries(root).some((p) => p.name === name) || existsSync(newPipelineFile(root, name));
}

/** The pipeline as a graph for the dashboard: agents and sessions, handoffs and participants. */
export function pipelineGraph(pipeline: Pipeline): Graph {
  const ids = new Set(pipeline.agents.map((a) => a.id));
  const nodes = pipeline.agents.map(
    (a): GraphNode => ({
      id: a.id,
      name: a.name,
      type: a.type,
      runtime: a.type === 'agent' ? a.runtime : null,
      model: a.type === 'agent' ? a.model : null,
      gate: a.type === 'agent' ? (a.gate?.type ?? null) : null,
      human_input: a.type === 'agent' && a.human_input?.enabled ? a.human_input.mode : null,
      participants: a.type === 'session' ? a.participants : [],
    }),
  );
  const edges: GraphEdge[] = [];
  for (const a of pipeline.agents) {
    for (const h of a.handoffs) {
      for (const to of h.to) {
        if (to === '*') {
          for (const other of ids)
            if (other !== a.id) edges.push({ from: a.id, to: other, condition: 'auto', kind: 'handoff' });
        } else if (ids.has(to)) edges.push({ from: a.id, to, condition: h.condition, kind: 'handoff' });
      }
    }
    if (a.type === 'session') {
      for (const p of a.participants)
        if (ids.has(p)) edges.push({ from: a.id, to: p, condition: '', kind: 'participant' });
    }
  }
  return { nodes, edges };
}

/** aqm's `GET /api/agents` shape. */
export function agentsJson(pipeline: Pipeline) {
  return pipeline.agents.map((a) => ({
    id: a.id,
    name: a.name,
    type: a.type,
    runtime: a.type === 'agent' ? a.runtime : null,
    model: a.type === 'agent' ? a.model : null,
    gate:
      a.type === 'agent' && a.gate
        ? { type: a.gate.type, prompt: a.gate.prompt, max_retries: a.gate.max_retries }
        : null,
    mcp: a.type === 'agent' ? a.mcp.map((m) => ({ server: m.server })) : [],
    handoffs: a.handoffs.map((h) => ({ to: h.to.join(', '), condition: h.condition, task: h.task })),
    context_strategy: a.context_strategy,
    human_input:
      a.type === 'agent' && a.human_input
        ? { enabled: a.human_input.enabled, mode: a.human_input.mode }
        : null,
    participants: a.type === 'session' ? a.participants : [],
  }));
}
