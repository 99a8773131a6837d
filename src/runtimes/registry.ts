import type { RuntimeName } from '../core/pipeline.js';
import { type Runtime, RuntimeError } from '../core/runtime.js';
import type { Script } from '../core/script.js';
import { claudeRuntime } from './claude.js';
import { codexRuntime } from './codex.js';
import { commandRuntime } from './command.js';
import { geminiRuntime } from './gemini.js';
import { type CliRuntime, cliBin } from './installed.js';
import { openaiRuntime } from './openai.js';
import { scriptedRuntime } from './scripted.js';

export interface RuntimeSettings {
  /** Config `trust_workspace` (default true): Gemini runs with --skip-trust. */
  trustWorkspace?: boolean;
  /** Where each CLI is (default: TROUPE_<NAME>_BIN, else the name on PATH). */
  bins?: Partial<Record<'claude' | 'gemini' | 'codex', string>>;
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
  const bin = (cli: CliRuntime) => settings.bins?.[cli] ?? cliBin(cli);
  switch (name) {
    case 'scripted':
      if (!configScript) {
        return unavailable(
          name,
          "runtime 'scripted' needs a script: set `script:` in .troupe/config.yaml or pass --script",
        );
      }
      return scriptedRuntime(configScript);
    case 'claude':
      return claudeRuntime({ bin: bin('claude') });
    case 'gemini':
      return geminiRuntime({ bin: bin('gemini'), trustWorkspace: settings.trustWorkspace ?? true });
    case 'codex':
      return codexRuntime({ bin: bin('codex') });
    case 'openai':
      return openaiRuntime();
    case 'command':
      return commandRuntime();
    case 'mailbox':
      // the executor mails a mailbox agent's stage (engine/execute/mailbox-stage.ts): never called
      return unavailable(name, 'runtime mailbox waits for a reply on the bus; it runs no process');
  }
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
