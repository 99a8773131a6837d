import { Command, CommanderError } from 'commander';
import { chooseStore } from '../app/store-choice.js';
import { reportError } from './action.js';
import { withAmqSpelling } from './amq-spelling.js';
import { registerCommands } from './commands/index.js';
import { Exit, exitCodeFor } from './exit-codes.js';
import { takeOption } from './global-options.js';
import { usageErrorLines } from './usage-error-line.js';
import { VERSION } from './version.js';

const program = new Command('troupe')
  .description('Run teams of AI coding agents described in one YAML file.')
  .version(VERSION, '-V, --version')
  .option(
    '--store <url|path>',
    'where tasks live: postgres://… or a SQLite file (also TROUPE_STORE, store: in config)',
  )
  .showSuggestionAfterError()
  // troupe's own options (-V, -h) come before a command, so a command can have a --version (publish)
  .enablePositionalOptions()
  .exitOverride()
  // said by the catch below, as troupe says every error
  .configureOutput({ outputError: () => {} });

// the reader went away (`troupe list | head -3`): what is left to print has no one to read it,
// which is not an error (as for cat and git)
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? Exit.ok);
  });

// --store is taken wherever it stands; the flag wins over TROUPE_STORE and the config (app/project.ts)
const { value: store, rest: given } = takeOption(process.argv, '--store');
// `troupe amq <amq command>`: AMQ's spelling mapped onto troupe's commands before parsing
const { argv, spelling } = withAmqSpelling(given);
if (spelling?.kind === 'help') {
  process.stdout.write(spelling.text);
  process.exit(Exit.ok);
}
if (spelling?.kind === 'refused') {
  process.stderr.write(`troupe: ${spelling.message}\n`);
  process.exit(Exit.usage);
}
if (store) chooseStore(store);
registerCommands(program, argv[2]);

try {
  await program.parseAsync(argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // help and version exit 0, the rest are usage errors
    if (error.exitCode !== 0) {
      process.stderr.write(usageErrorLines(error.message, typedCommand(program, argv.slice(2))));
    }
    process.exitCode = error.exitCode === 0 ? Exit.ok : Exit.usage;
  } else {
    reportError(error);
    process.exitCode = exitCodeFor(error);
  }
}

/** The (sub)command the words name, as far as they name one (`bus send`); null when none. */
function typedCommand(root: Command, words: string[]): string | null {
  const path: string[] = [];
  let command = root;
  for (const word of words) {
    const next = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!next) break;
    path.push(next.name());
    command = next;
  }
  return path.length ? path.join(' ') : null;
}
