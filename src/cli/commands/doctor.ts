import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { DoctorFlags } from '../handlers/doctor.js';

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description(
      'check the agent CLIs (installed, version, can run headless here), MCP commands and API keys',
    )
    .option('-f, --file <path>', 'pipeline whose runtimes, MCP servers and keys to check (default: discover)')
    .option('--json', 'print the report as JSON')
    .action(
      action(async (flags: DoctorFlags) =>
        (await import('../handlers/doctor.js')).doctor(flags, processIo()),
      ),
    );
}
