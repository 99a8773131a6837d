import type { Command } from 'commander';
import { messageOf } from '../../core/errors.js';
import { action } from '../action.js';
import { Exit } from '../exit-codes.js';

interface DoctorFlags {
  json?: boolean;
  file?: string;
}

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description(
      'check the agent CLIs (installed, version, can run headless here), MCP commands and API keys',
    )
    .option('-f, --file <path>', 'pipeline whose runtimes, MCP servers and keys to check (default: discover)')
    .option('--json', 'print the report as JSON')
    .action(
      action(async (flags: DoctorFlags) => {
        const { runDoctor } = await import('../../runtimes/doctor-checks.js');
        const { findProjectRoot, resolvePipeline } = await import('../../pipeline/discover.js');
        const { loadProjectConfig } = await import('../../pipeline/config.js');
        const { validatePipelineFile } = await import('../../pipeline/validate.js');
        const root = findProjectRoot(process.cwd());
        let config: ReturnType<typeof loadProjectConfig> | null = null;
        try {
          config = loadProjectConfig(root);
        } catch {
          // a broken config is `validate`'s to report; doctor checks the machine
        }
        let pipeline = null;
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
        const report = await runDoctor({
          cwd: process.cwd(),
          pipeline,
          trustWorkspace: config?.trust_workspace ?? true,
        });
        if (flags.json) {
          process.stdout.write(
            `${JSON.stringify({ ...report, ...(noPipeline ? { no_pipeline: noPipeline } : {}) }, null, 2)}\n`,
          );
        } else {
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
            lines.push(
              `${k.set ? '✓' : '✗'} ${k.variable} (agent ${k.agent}) ${k.set ? 'is set' : 'is not set'}`,
            );
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
          lines.push(
            !report.ok
              ? '✗ not ready: see the fixes above'
              : noPipeline
                ? `· ready to run headless here: ${
                    report.clis
                      .filter((c) => c.status === 'ok')
                      .map((c) => c.runtime)
                      .join(', ') || 'none of the three'
                  }`
                : report.warnings.length
                  ? '✓ ready, with the warnings above'
                  : '✓ ready',
          );
          process.stdout.write(`${lines.join('\n')}\n`);
        }
        return report.ok ? Exit.ok : Exit.failed;
      }),
    );
}
