/**
 * `troupe amq <amq command…>`: AMQ's documented command lines, run unchanged. troupe keeps the
 * mailbox verbs under `bus` and the live ones at the top (`launch`, `session`, `wake`); this maps
 * AMQ's spelling onto those before anything is parsed, so every flag, output and exit code is the
 * troupe command's own. A second `amq` binary is not shipped: it would shadow a real AMQ install.
 */

/** AMQ's verbs that are `troupe bus <verb>`. */
const BUS_VERBS = new Set([
  'init',
  'send',
  'list',
  'read',
  'drain',
  'reply',
  'thread',
  'trace',
  'watch',
  'monitor',
  'receipts',
  'dlq',
  'presence',
  'who',
  'doctor',
  'cleanup',
  'setup',
  'env',
  'shell-setup',
  'route',
  'swarm',
  'integration',
]);

/** AMQ's verbs that are troupe's own top-level commands. */
const TOP_VERBS = new Set(['launch', 'session', 'wake', 'upgrade']);

/** AMQ's verbs troupe does not have, and what to use instead. */
const ABSENT: Record<string, string> = {
  coop: '`amq coop init` is `troupe bus coop init`, `amq coop exec` is `troupe session exec`',
};

export type AmqSpelling =
  | { kind: 'run'; argv: string[] }
  | { kind: 'help'; text: string }
  | { kind: 'refused'; message: string };

/**
 * `args` are the words after `troupe amq`. Returns the troupe words to run, help, or a refusal
 * (one line, a usage error).
 */
export function amqSpelling(args: string[]): AmqSpelling {
  const [verb, ...rest] = args;
  if (verb === undefined || verb === '--help' || verb === '-h' || verb === 'help')
    return { kind: 'help', text: HELP };
  if (verb === '--version' || verb === '-v' || verb === 'version')
    return { kind: 'run', argv: ['--version'] };
  if (BUS_VERBS.has(verb)) return { kind: 'run', argv: ['bus', verb, ...rest] };
  if (TOP_VERBS.has(verb)) return { kind: 'run', argv: [verb, ...rest] };
  if (verb === 'coop' && rest[0] === 'exec')
    return { kind: 'run', argv: ['session', 'exec', ...rest.slice(1)] };
  if (verb === 'coop' && rest[0] === 'init')
    return { kind: 'run', argv: ['bus', 'coop', 'init', ...rest.slice(1)] };
  const instead = ABSENT[verb];
  if (instead) return { kind: 'refused', message: `amq ${verb} is not in troupe: ${instead}` };
  return { kind: 'refused', message: `'${verb}' is not an AMQ command troupe knows (troupe amq --help)` };
}

/** The process argv with `troupe amq …` rewritten to the troupe command it names. */
export function withAmqSpelling(argv: string[]): { argv: string[]; spelling?: AmqSpelling } {
  if (argv[2] !== 'amq') return { argv };
  const spelling = amqSpelling(argv.slice(3));
  return spelling.kind === 'run'
    ? { argv: [...argv.slice(0, 2), ...spelling.argv], spelling }
    : { argv, spelling };
}

const HELP = `Usage: troupe amq <amq command> [flags]

Runs AMQ's documented commands as AMQ spells them, on troupe's bus (the same files):
  amq ${[...BUS_VERBS].join('|')} …  →  troupe bus <verb> …
  amq ${[...TOP_VERBS].join('|')} …  →  troupe <verb> …
  amq coop init [--agents L] [--root R] [--force]  →  troupe bus coop init …
  amq coop exec [--session S] <agent> [-- args]  →  troupe session exec …
  amq --version  →  troupe --version
Every flag, output and exit code is the
troupe command's; where they differ from AMQ's, docs/parity.md says how.
`;
