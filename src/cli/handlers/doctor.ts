import { messageOf } from '../../core/errors.js';
import type { Pipeline } from '../../core/pipeline.js';
import { loadProjectConfig, type ProjectConfig } from '../../pipeline/config.js';
import { findProjectRoot, resolvePipeline } from '../../pipeline/discover.js';
import { validatePipelineFile } from '../../pipeline/validate.js';
import { type DoctorReport, runDoctor } from '../../runtimes/doctor-checks.js';
import { type CommandIo, writeJson } from '../command-io.js';
import { Exit } from '../exit-codes.js';

export interface DoctorFlags {
  json?: boolean;
  file?: string;
}

/** `troupe doctor`: can this machine run the pipeline's agents headless? Exit 0 when it can. */
export async function doctor(flags: DoctorFlags, io: CommandIo): Promise<number> {
  const root = findProjectRoot(io.cwd);
  let config: ProjectConfig | null = null;
  try {
    config = loadProjectConfig(root);
  } catch {
    // a broken config is `validate`'s to report; doctor checks the machine
  }
  let pipeline: Pipeline | null = null;
  // why no pipeline is checked, when none is: said, so that "ready" is not read as the pipeline's
  let noPipeline: string | null = null;
  try {
    const found = resolvePipeline(
      root,
      flags.file ? { file: flags.file } : {},
      config ?? { default_pipeline: null },
    );
    pipeline = validatePipelineFile(found.file, { name: found.name }).pipeline ?? null;
    if (!pipeline) noPipeline = `${found.file} has errors (see \`troupe validate ${found.file}\`)`;
  } catch (error) {
    noPipeline = messageOf(error);
  }
  const report = await runDoctor({ cwd: io.cwd, pipeline, trustWorkspace: config?.trust_workspace ?? true });
  if (flags.json) writeJson(io, { ...report, ...(noPipeline ? { no_pipeline: noPipeline } : {}) });
  else io.out(`${reportLines(report, noPipeline).join('\n')}\n`);
  return report.ok ? Exit.ok : Exit.failed;
}

function reportLines(report: DoctorReport, noPipeline: string | null): string[] {
  const lines: string[] = [];
  for (const c of report.clis) {
    const mark = c.status === 'ok' ? '✓' : c.used ? '✗' : '·';
    // codex says `codex-cli 0.171.0`
    const version = c.version ? ` ${c.version.replace(new RegExp(`^${c.runtime}(-cli)? `), '')}` : '';
    const use = !report.pipeline ? '' : c.used ? '' : ' — not used by the pipeline';
    lines.push(
      `${mark} ${c.runtime}${version}: ${c.status === 'ok' ? 'ready' : c.status} (${c.detail})${use}`,
    );
    if (c.fix && c.status !== 'ok') lines.push(`  fix: ${c.fix}`);
  }
  for (const m of report.mcp) {
    lines.push(
      `${m.found ? '✓' : '✗'} MCP ${m.server} (agent ${m.agent}): ${m.command}${m.found ? '' : ' not found'}`,
    );
    if (m.fix) lines.push(`  fix: ${m.fix}`);
  }
  for (const k of report.keys) {
    lines.push(`${k.set ? '✓' : '✗'} ${k.variable} (agent ${k.agent}) ${k.set ? 'is set' : 'is not set'}`);
    if (k.fix) lines.push(`  fix: ${k.fix}`);
  }
  for (const w of report.warnings) {
    lines.push(`${w.blocking ? '✗' : '⚠'} agent ${w.agent}: ${w.message}`);
    lines.push(`  fix: ${w.fix}`);
  }
  if (noPipeline) {
    lines.push(
      `· no pipeline checked: ${noPipeline}`,
      '  checked the three CLIs only; `troupe doctor -f <pipeline>` also checks its runtimes, MCP servers, keys and permissions',
    );
  }
  lines.push(verdict(report, noPipeline));
  return lines;
}

function verdict(report: DoctorReport, noPipeline: string | null): string {
  if (!report.ok) return '✗ not ready: see the fixes above';
  if (noPipeline) {
    const ready = report.clis.filter((c) => c.status === 'ok').map((c) => c.runtime);
    return `· ready to run headless here: ${ready.join(', ') || 'none of the three'}`;
  }
  return report.warnings.length ? '✓ ready, with the warnings above' : '✓ ready';
}
