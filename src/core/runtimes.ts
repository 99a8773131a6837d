/**
 * The runtime catalog: every runtime troupe knows, each with its facts in one declaration.
 * `RuntimeName` and every subset (the CLIs, the runtimes that judge gates, the ones live co-op
 * launches…) are derived from it, so a new runtime is one entry here, its module in
 * `runtimes/`, and the lines the compiler then asks for (docs/runtimes.md, "Adding a runtime").
 * Pure data: the dashboard reads it too.
 */

/** What selects a CLI's account, for its provider key (core/provider-key.ts). */
export interface CliAccount {
  /** Variables naming another endpoint than the vendor's own (a gateway, a cloud), first set wins; null: the value is the endpoint. */
  readonly endpoint: ReadonlyArray<readonly [variable: string, endpoint: string | null]>;
  /** Variables selecting the account, in the CLI's own order of precedence: the first set wins. */
  readonly identity: readonly string[];
}

interface CommonFacts {
  /**
   * It answers a prompt with a model and needs nothing else: it can judge an llm gate, be a
   * routing tier or router, and seat a template's writer or reviewer (`init --runtimes`).
   */
  readonly judgesGates: boolean;
  /** `resume: true` continues its own conversation. */
  readonly resumes: boolean;
  /** Its stages are cut off after config `timeouts:` (600 s unless set); a person may answer tomorrow. */
  readonly timesOut: boolean;
  /** What to do when it refuses the credentials (a RuntimeError of kind `auth`). */
  readonly authHint?: string;
}

/** A CLI troupe runs headless as a subprocess. */
export interface CliFacts extends CommonFacts {
  readonly kind: 'cli';
  /** Its name on PATH (`TROUPE_<NAME>_BIN` or config `bins` point elsewhere). */
  readonly bin: string;
  /** How to install it: the fix `doctor` and `validate` print when it is missing. */
  readonly install: string;
  readonly accounts: CliAccount;
  /** Its place when `troupe init` proposes a team from the CLIs it finds: the lowest writes (reviews) first. */
  readonly team: { readonly writes: number; readonly reviews: number };
  /** Live co-op can launch it (`bus setup`, `launch`: live/agent-command.ts). */
  readonly live: boolean;
  readonly authHint: string;
  /** What to do when it refuses to work in an untrusted folder. */
  readonly untrustedHint?: string;
}

/** A runtime that is no CLI: an HTTP API, a command, a script, a person or agent on the bus. */
export interface OtherFacts extends CommonFacts {
  readonly kind: 'http' | 'command' | 'script' | 'bus';
}

export type RuntimeFacts = CliFacts | OtherFacts;

export const RUNTIMES = {
  claude: {
    kind: 'cli',
    bin: 'claude',
    install: 'npm i -g @anthropic-ai/claude-code',
    accounts: {
      endpoint: [
        ['CLAUDE_CODE_USE_BEDROCK', 'bedrock'],
        ['CLAUDE_CODE_USE_VERTEX', 'vertex'],
        ['CLAUDE_CODE_USE_FOUNDRY', 'foundry'],
        ['ANTHROPIC_BASE_URL', null],
      ],
      identity: ['ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN', 'CLAUDE_CONFIG_DIR'],
    },
    team: { writes: 1, reviews: 3 },
    live: true,
    judgesGates: true,
    resumes: true,
    timesOut: true,
    authHint: 'log in: run `claude` once and use /login (or `claude setup-token`), or set ANTHROPIC_API_KEY',
  },
  gemini: {
    kind: 'cli',
    bin: 'gemini',
    install: 'npm i -g @google/gemini-cli',
    accounts: {
      endpoint: [['GOOGLE_GENAI_USE_VERTEXAI', 'vertex']],
      identity: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_CLOUD_PROJECT', 'GEMINI_CLI_HOME'],
    },
    team: { writes: 3, reviews: 1 },
    live: true,
    judgesGates: true,
    resumes: true,
    timesOut: true,
    authHint: 'set GEMINI_API_KEY, or run `gemini` once and choose an auth method',
    untrustedHint:
      'set `trust_workspace: true` in .troupe/config.yaml (troupe then passes --skip-trust), or trust this folder in an interactive `gemini`',
  },
  codex: {
    kind: 'cli',
    bin: 'codex',
    install: 'npm i -g @openai/codex',
    // `codex exec` reads CODEX_API_KEY, else the login kept in CODEX_HOME
    accounts: { endpoint: [], identity: ['CODEX_API_KEY', 'CODEX_HOME'] },
    team: { writes: 2, reviews: 2 },
    live: true,
    judgesGates: true,
    resumes: true,
    timesOut: true,
    authHint:
      'log in with `codex login` (`printenv OPENAI_API_KEY | codex login --with-api-key`), or set CODEX_API_KEY: `codex exec` does not read OPENAI_API_KEY',
  },
  openai: {
    kind: 'http',
    judgesGates: true,
    resumes: false,
    timesOut: true,
    authHint: 'check the API key variable named by `openai.api_key_env`',
  },
  command: { kind: 'command', judgesGates: false, resumes: false, timesOut: true },
  scripted: { kind: 'script', judgesGates: true, resumes: false, timesOut: true },
  mailbox: { kind: 'bus', judgesGates: false, resumes: false, timesOut: false },
} as const satisfies Record<string, RuntimeFacts>;

type Catalog = typeof RUNTIMES;
export type RuntimeName = keyof Catalog;

/** Every runtime, in the catalog's order. */
export const RUNTIME_NAMES = Object.keys(RUNTIMES) as RuntimeName[];

/** A yes-or-no fact of every runtime. */
export type RuntimeFlag = 'judgesGates' | 'resumes' | 'timesOut';

/** The runtimes whose `fact` is true. */
export type RuntimeWith<F extends RuntimeFlag> = {
  [K in RuntimeName]: Catalog[K][F] extends true ? K : never;
}[RuntimeName];

export function runtimesWith<F extends RuntimeFlag>(fact: F): RuntimeWith<F>[] {
  return RUNTIME_NAMES.filter((name) => RUNTIMES[name][fact]) as RuntimeWith<F>[];
}

/** The runtimes that are CLIs troupe runs as subprocesses. */
export type CliRuntime = { [K in RuntimeName]: Catalog[K]['kind'] extends 'cli' ? K : never }[RuntimeName];
export const CLI_RUNTIMES = RUNTIME_NAMES.filter((name) => RUNTIMES[name].kind === 'cli') as CliRuntime[];

/** The CLIs live co-op launches. */
export type LiveRuntime = {
  [K in CliRuntime]: Catalog[K]['live'] extends true ? K : never;
}[CliRuntime];
export const LIVE_RUNTIMES = CLI_RUNTIMES.filter((name) => RUNTIMES[name].live) as LiveRuntime[];

/** A gate, a routing tier or a router runs on one of these; so does a template's seat. */
export type GateRuntime = RuntimeWith<'judgesGates'>;
export const GATE_RUNTIMES = runtimesWith('judgesGates');

export function isRuntimeName(name: string): name is RuntimeName {
  return Object.hasOwn(RUNTIMES, name);
}

export function isCliRuntime(name: string): name is CliRuntime {
  return isRuntimeName(name) && RUNTIMES[name].kind === 'cli';
}

/** The facts of a CLI runtime (typed as such). */
export function cliFacts(name: CliRuntime): CliFacts {
  return RUNTIMES[name];
}

/** "claude, gemini or codex" (or "… and codex"): names for a message. */
export function spellList(names: readonly string[], conjunction: 'or' | 'and' = 'or'): string {
  return names.length < 2
    ? names.join('')
    : `${names.slice(0, -1).join(', ')} ${conjunction} ${names.at(-1)}`;
}
