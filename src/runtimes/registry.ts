import { type Runtime, RuntimeError } from '../core/runtime.js';
import { type CliRuntime, isCliRuntime, RUNTIMES, type RuntimeName } from '../core/runtimes.js';
import type { Script } from '../core/script.js';
import { claudeLogin, claudeRuntime } from './claude.js';
import { codexLogin, codexRuntime } from './codex.js';
import { commandRuntime } from './command.js';
import { geminiLogin, geminiRuntime } from './gemini.js';
import type { LoginProbe } from './login-probe.js';
import { openaiRuntime } from './openai.js';
import { scriptedRuntime } from './scripted.js';

export interface RuntimeSettings {
  /** Config `trust_workspace` (default true): Gemini runs with --skip-trust. */
  trustWorkspace?: boolean;
  /** Where each CLI is (default: TROUPE_<NAME>_BIN, else the name on PATH). */
  bins?: Partial<Record<CliRuntime, string>>;
}

/** What a factory is given: a CLI's also its binary. */
interface FactorySettings {
  trustWorkspace: boolean;
  /** Config `script:`. */
  configScript: Script | null;
}
interface CliFactorySettings extends FactorySettings {
  bin: string;
}

type Factories = {
  [K in RuntimeName]: (typeof RUNTIMES)[K]['kind'] extends 'cli'
    ? (settings: CliFactorySettings) => Runtime
    : (settings: FactorySettings) => Runtime;
};

/** How each runtime of the catalog (core/runtimes.ts) is made. */
const FACTORIES: Factories = {
  claude: ({ bin }) => claudeRuntime({ bin }),
  gemini: ({ bin, trustWorkspace }) => geminiRuntime({ bin, trustWorkspace }),
  codex: ({ bin }) => codexRuntime({ bin }),
  openai: () => openaiRuntime(),
  command: () => commandRuntime(),
  scripted: ({ configScript }) =>
    configScript
      ? scriptedRuntime(configScript)
      : unavailable(
          'scripted',
          "runtime 'scripted' needs a script: set `script:` in .troupe/config.yaml or pass --script",
        ),
  // the executor mails a mailbox agent's stage (engine/execute/mailbox-stage.ts): never called
  mailbox: () => unavailable('mailbox', 'runtime mailbox waits for a reply on the bus; it runs no process'),
};

/** How `troupe doctor` asks each CLI whether it can run headless here. */
export const LOGIN_PROBES: Record<CliRuntime, LoginProbe> = {
  claude: claudeLogin,
  gemini: geminiLogin,
  codex: codexLogin,
};

/** Where a CLI is: `bins` (config), else TROUPE_<NAME>_BIN, else its name on PATH. */
export function cliBin(
  cli: CliRuntime,
  bins: RuntimeSettings['bins'],
  env: NodeJS.ProcessEnv = process.env,
): string {
  return bins?.[cli] ?? env[`TROUPE_${cli.toUpperCase()}_BIN`] ?? RUNTIMES[cli].bin;
}

/**
 * Picks the runtime for an agent. A task started with `--script` runs every agent and every
 * llm gate on the scripted runtime; otherwise the agent's own runtime.
 */
export function runtimeFor(
  name: RuntimeName,
  script: Script | null,
  configScript: Script | null,
  settings: RuntimeSettings = {},
): Runtime {
  if (script) return scriptedRuntime(script);
  const common = { trustWorkspace: settings.trustWorkspace ?? true, configScript };
  if (isCliRuntime(name)) return FACTORIES[name]({ ...common, bin: cliBin(name, settings.bins) });
  return (FACTORIES[name] as (settings: FactorySettings) => Runtime)(common);
}

function unavailable(name: string, message: string): Runtime {
  return {
    name,
    // biome-ignore lint/correctness/useYield: it fails before producing anything
    async *run() {
      throw new RuntimeError('missing_cli', message);
    },
  };
}
