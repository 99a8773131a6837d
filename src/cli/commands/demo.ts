import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('run the bundled example team offline (scripted replies) and show where to look')
    .action(action(async () => (await import('../handlers/demo.js')).demo(processIo())));
}
