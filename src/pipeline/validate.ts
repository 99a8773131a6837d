import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Pipeline } from '../core/pipeline.js';
import { checkStrictQa } from './check-qa.js';
import type { CompiledPipeline } from './compiled.js';
import type { ProjectConfig, QaMode } from './config.js';
import { type Diagnostic, DiagnosticSink } from './diagnostics.js';
import { isolationSummary } from './isolation.js';
import { type LintOptions, lintPipeline } from './lint.js';
import { compilePipeline, type LoadOptions } from './load.js';

export type { Diagnostic } from './diagnostics.js';

export interface ValidateOptions extends LoadOptions, LintOptions {
  /** Project config `qa:`; strict also refuses a verifier on the worker's runtime and model. */
  qa?: QaMode;
  /** Project config `gate.model`: the model a verifier judges with when neither names one. */
  gateModel?: string | null;
}

export interface ValidationResult {
  /** Set when there are no errors. */
  pipeline?: Pipeline;
  /** Errors and warnings, sorted by file and position. */
  diagnostics: Diagnostic[];
  /** What the pipeline uses, for the summary line ("2 llm gates", "1 session", …). */
  features: string[];
  /** The agents of the pipeline; with errors, the agents written; null when the file cannot be read as a pipeline. */
  agentCount: number | null;
}

/** What the project's config says about validating its pipelines (qa, gate model, routing tiers). */
export function configValidateOptions(config: ProjectConfig): ValidateOptions {
  return {
    qa: config.qa,
    gateModel: config.gate.model,
    routingTiers: Object.keys(config.routing?.tiers ?? {}),
  };
}

/**
 * Every problem of a pipeline file, as diagnostics; it does not throw for problems in the
 * pipeline. Warnings (unreachable agents, endless reject loops, missing CLIs, …) are looked for
 * once there are no errors, since they would mostly repeat them. Required params need no value
 * here: they are given at run time.
 */
export function validatePipelineFile(file: string, opts: ValidateOptions = {}): ValidationResult {
  const sink = new DiagnosticSink();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    sink.error(
      { file: path.resolve(file), line: 1, col: 1 },
      `cannot read the pipeline file (${reason})`,
      'check the path and its permissions',
    );
    return { diagnostics: sink.list(), features: [], agentCount: null };
  }
  return validatePipelineText(text, file, opts, sink);
}

/** validatePipelineFile for text already read; `file` is where it says the text is from. */
export function validatePipelineText(
  text: string,
  file: string,
  opts: ValidateOptions = {},
  sink = new DiagnosticSink(),
): ValidationResult {
  const compiled = compilePipeline(text, file, { ...opts, requireParams: false }, sink);
  if (compiled && opts.qa === 'strict') checkStrictQa(compiled, sink, opts.gateModel ?? null);
  if (compiled && !sink.hasErrors) lintPipeline(compiled, sink, opts);
  const valid = compiled && !sink.hasErrors;
  return {
    ...(valid ? { pipeline: compiled.pipeline } : {}),
    diagnostics: sink.list(),
    features: compiled ? features(compiled) : [],
    agentCount: valid ? compiled.pipeline.agents.length : (compiled?.writtenAgents ?? null),
  };
}

function features(compiled: CompiledPipeline): string[] {
  const nodes = compiled.pipeline.agents;
  const count = (n: number, one: string, many = `${one}s`) => (n > 0 ? [`${n} ${n === 1 ? one : many}`] : []);
  const gates = (type: string) => nodes.filter((n) => n.type === 'agent' && n.gate?.type === type).length;
  const agentsOnly = nodes.flatMap((n) => (n.type === 'agent' ? [n] : []));
  const definitions = [...compiled.definitions.values()];
  const isolation = isolationSummary(compiled.pipeline);
  return [
    ...count(gates('llm'), 'llm gate'),
    ...count(gates('human'), 'human gate'),
    ...count(gates('command'), 'command gate'),
    ...count(nodes.filter((n) => n.type === 'session').length, 'session'),
    ...count(
      nodes.reduce((sum, n) => sum + n.handoffs.length, 0),
      'handoff',
    ),
    ...count(
      agentsOnly.reduce((sum, n) => sum + n.mcp.length, 0),
      'MCP server',
    ),
    ...count(Object.keys(compiled.pipeline.paramDefinitions).length, 'param'),
    ...count(definitions.filter((d) => d.at.source !== compiled.source).length, 'imported agent'),
    ...count(definitions.filter((d) => d.raw.extends).length, 'agent using extends', 'agents using extends'),
    ...(isolation ? [isolation] : []),
  ];
}
