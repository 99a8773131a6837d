import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { UpgradeFlags } from '../handlers/upgrade.js';

export function registerUpgrade(program: Command): void {
  program
    .command('upgrade')
    .description(
      'the latest troupe on the npm registry, and the npm command that installs it (installs nothing)',
    )
    .option('--json', 'print JSON: {current, latest, update_available, command?}')
    .action(
      action(async (flags: UpgradeFlags) => {
        const { upgradeCommand } = await import('../handlers/upgrade.js');
        return upgradeCommand(flags, processIo());
      }),
    );
}
