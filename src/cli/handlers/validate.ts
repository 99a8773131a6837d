import { statSync } from 'node:fs';
import path from 'node:path';
import { NotFoundError, UsageError } from '../../core/errors.js';
import type { Pipeline } from '../../core/pipeline.js';
import { loadProjectConfig } from '../../pipeline/config.js';
import { formatDiagnostic } from '../../pipeline/diagnostics.js';
import { findProjectRoot, type PipelineLocation, resolvePipeline } from '../../pipeline/discover.js';
import {
  configValidateOptions,
  type Diagnostic,
  type ValidationResult,
  validatePipelineFile,
} from '../../pipeline/validate.js';
import type { CommandIo } from '../command-io.js';
import { Exit } from '../exit-codes.js';
import { parseParams } from '../options.js';
import { symphonyWorkflowTarget, validateSymphony } from './validate-symphony.js';

export interface ValidateFlags {
  file?: string;
  pipeline?: string;
  strict?: boolean;
  json?: boolean;
  param: string[];
  paramsFile?: string;
}

/** `troupe validate [path]`: check a pipeline; exit 2 when it is invalid (or has warnings, with --strict). */
export async function validate(
  target: string | undefined,
  flags: ValidateFlags,
  io: CommandIo,
): Promise<number> {
  if (target !== undefined && flags.file !== undefined) throw new UsageError('give PATH or --file, not both');
  const workflow = symphonyWorkflowTarget(target ?? flags.file, io.cwd);
  if (workflow) return validateSymphony(workflow, flags, io);
  const found = locatePipeline(target ?? flags.file, flags.pipeline, io.cwd);
  const config = loadProjectConfig(found.root);
  const result = validatePipelineFile(found.file, {
    ...configValidateOptions(config),
    name: found.name,
    params: parseParams(flags.param),
    ...(flags.paramsFile ? { paramsFile: flags.paramsFile } : {}),
  });
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  const warnings = result.diagnostics.filter((d) => d.severity === 'warning');
  if (flags.strict && errors.length === 0 && result.pipeline) {
    warnings.push(...(await doctorWarnings(result.pipeline, found.file, io.cwd)));
  }
  const valid = errors.length === 0 && !(flags.strict && warnings.length > 0);
  io.out(
    flags.json
      ? asJson(found.file, valid, errors, warnings, result)
      : asText(valid, errors, warnings, result, flags),
  );
  // an invalid pipeline exits as `run` does with it (README: 2)
  return valid ? Exit.ok : Exit.usage;
}

/** PATH (a file, or a directory to discover in), else discovery from the working directory. */
function locatePipeline(
  target: string | undefined,
  pipeline: string | undefined,
  cwd: string,
): PipelineLocation & { root: string } {
  let root = findProjectRoot(cwd);
  if (target !== undefined) {
    const at = path.resolve(cwd, target);
    const stat = statSync(at, { throwIfNoEntry: false });
    if (!stat) throw new NotFoundError(`no such file or directory: ${target}`);
    if (stat.isFile()) {
      if (pipeline !== undefined) throw new UsageError('give a pipeline file or --pipeline, not both');
      return { ...resolvePipeline(root, { file: at }, { default_pipeline: null }), root };
    }
    root = at;
  }
  return {
    ...resolvePipeline(root, pipeline === undefined ? {} : { pipeline }, loadProjectConfig(root)),
    root,
  };
}

function asText(
  valid: boolean,
  errors: Diagnostic[],
  warnings: Diagnostic[],
  result: ValidationResult,
  flags: ValidateFlags,
): string {
  const lines = [...errors, ...warnings].map(formatDiagnostic);
  if (valid) {
    const count = result.pipeline?.agents.length ?? 0;
    const features = result.features.length ? ` (${result.features.join(', ')})` : '';
    const noted = warnings.length ? `, ${plural(warnings.length, 'warning')}` : '';
    lines.push(`✓ valid: ${plural(count, 'agent')}${features}${noted}`);
  } else {
    const strict = errors.length === 0 && flags.strict ? ' (--strict)' : '';
    lines.push(`✗ ${plural(errors.length, 'error')}, ${plural(warnings.length, 'warning')}${strict}`);
  }
  return `${lines.join('\n')}\n`;
}

function asJson(
  file: string,
  valid: boolean,
  errors: Diagnostic[],
  warnings: Diagnostic[],
  result: ValidationResult,
): string {
  const strip = ({ severity: _, ...rest }: Diagnostic) => rest;
  const summary = { agent_count: result.agentCount, features: result.features };
  return `${JSON.stringify({ valid, file, errors: errors.map(strip), warnings: warnings.map(strip), summary }, null, 2)}\n`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * `--strict` also runs `troupe doctor`'s checks for what this pipeline uses: a CLI that cannot
 * run headless here (not logged in, untrusted directory), an MCP command or API key missing.
 * A CLI missing from PATH is already a warning of its own.
 */
async function doctorWarnings(pipeline: Pipeline, file: string, cwd: string): Promise<Diagnostic[]> {
  // only --strict asks the CLIs: the doctor loads every runtime, which plain validate does not need
  const { runDoctor } = await import('../../runtimes/doctor-checks.js');
  const report = await runDoctor({ cwd, pipeline });
  const byId = new Map(pipeline.agents.map((a) => [a.id, a]));
  const at = (agentId: string) => byId.get(agentId)?.source ?? { file, line: 1, col: 1 };
  const warn = (
    where: { file: string; line: number; col: number },
    message: string,
    hint: string | null,
  ): Diagnostic => ({
    severity: 'warning',
    file: where.file,
    line: where.line,
    col: where.col,
    message,
    ...(hint ? { hint } : {}),
  });
  const warnings: Diagnostic[] = [];
  for (const cli of report.clis) {
    if (!cli.used || cli.status === 'ok' || cli.status === 'missing_cli') continue;
    const user = pipeline.agents.find(
      (a) => a.type === 'agent' && (a.runtime === cli.runtime || a.gate?.runtime === cli.runtime),
    );
    warnings.push(
      warn(
        user ? at(user.id) : { file, line: 1, col: 1 },
        `\`${cli.runtime}\` cannot run headless here: ${cli.status} (${cli.detail})`,
        cli.fix,
      ),
    );
  }
  for (const m of report.mcp) {
    if (!m.found)
      warnings.push(
        warn(at(m.agent), `MCP server ${m.server} of \`${m.agent}\`: \`${m.command}\` not found`, m.fix),
      );
  }
  for (const k of report.keys) {
    if (!k.set)
      warnings.push(warn(at(k.agent), `\`${k.agent}\` needs ${k.variable} in the environment`, k.fix));
  }
  for (const w of report.warnings) warnings.push(warn(at(w.agent), `\`${w.agent}\`: ${w.message}`, w.fix));
  return warnings;
}
