import type { RuntimeName } from '../pipeline/types.js';
import { type Runtime, RuntimeError } from './runtime.js';
import type { Script } from './script.js';
import { scriptedRuntime } from './scripted.js';

/**
 * Picks the runtime for an agent. A task started with `--script` runs every agent and every
 * llm gate on the scripted runtime; otherwise the agent's own runtime.
 */
export function runtimeFor(name: RuntimeName, script: Script | null, configScript: Script | null): Runtime {
  if (script) return scriptedRuntime(script);
  if (name === 'scripted') {
    if (!configScript) {
      return unavailable(
        name,
        "runtime 'scripted' needs a script: set `script:` in .troupe/config.yaml or pass --script",
      );
    }
    return scriptedRuntime(configScript);
  }
  return unavailable(
    name,
    `runtime '${name}' is not available in this build of troupe yet; run offline with --script <file>`,
  );
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
