import type { Command } from 'commander';
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
        try {
          const found = resolvePipeline(
            root,
            flags.file ? { file: flags.file } : {},
            config ?? { default_pipeline: null },
          );
          pipeline = validatePipelineFile(found.file, { name: found.name }).pipeline ?? null;
        } catch {
          // no pipeline here: check every CLI anyway
        }
        const report = await runDoctor({
          cwd: process.cwd(),
          pipeline,
          trustWorkspace: config?.trust_workspace ?? true,
        });
        if (flags.json) {
          process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        } else {
          const lines: string[] = [];
          for (const c of report.clis) {
            const mark = c.status === 'ok' ? '✓' : c.used ? '✗' : '·';
            const version = c.version ? ` ${c.version}` : '';
            lines.push(
              `${mark} ${c.runtime}${version}: ${c.status === 'ok' ? 'ready' : c.status} (${c.detail})${c.used ? '' : ' — not used by the pipeline'}`,
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
          lines.push(report.ok ? '✓ ready' : '✗ not ready: see the fixes above');
          process.stdout.write(`${lines.join('\n')}\n`);
        }
        return report.ok ? Exit.ok : Exit.failed;
      }),
    );
}
