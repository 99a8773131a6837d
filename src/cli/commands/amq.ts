import type { Command } from 'commander';

/**
 * `troupe amq <amq command…>`: listed here for `troupe --help`; the words are mapped onto troupe's
 * commands before parsing (cli/amq-spelling.ts), so this command's action never runs.
 */
export function registerAmq(program: Command): void {
  program
    .command('amq')
    .description("run AMQ's documented commands as AMQ spells them (amq send … → troupe bus send …)")
    .argument('[amq-command...]', 'an AMQ command line, without `amq`')
    .allowUnknownOption()
    .action(() => {});
}
