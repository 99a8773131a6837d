import { createHash } from 'node:crypto';
import type { ProviderWindow } from './event-store.js';
import { endpointBase, endpointKeyVar } from './openai-endpoint.js';
import type { AgentNode } from './pipeline.js';
import { isCliRuntime, RUNTIMES } from './runtimes.js';

/**
 * What a rate limit closes: the provider key of the call that met it — its runtime, the endpoint
 * it went to and the account or key it used — so Ollama and OpenAI (both `runtime: openai`), or
 * two keys or accounts of one CLI, never wait for each other. Pure: the agent as it runs the
 * stage and the environment its runtime gets.
 *
 *   claude                                 the CLI's own login
 *   claude#1f0c9a2e                        ANTHROPIC_API_KEY (or another identity variable) set
 *   openai@127.0.0.1:11434                 a local server, no key
 *   openai@api.openai.com#5d41402a         OpenAI's API with that key
 *
 * A key is never the secret itself: `#` is the first 8 hex digits of a sha256 of the variable
 * and its value. Windows written by a troupe before provider keys name a runtime alone; the
 * store's migration marks them `<runtime>*`, which closes every key of that runtime.
 */

export type Env = Readonly<Record<string, string | undefined>>;

/** The agent as it runs a stage (on its routed tier or a fallback): what its provider key depends on. */
export type ProviderTarget = Pick<AgentNode, 'runtime'> & { openai?: AgentNode['openai'] };

/** The suffix of a window that closes every provider of its runtime (written by an older troupe). */
export const ANY_ACCOUNT = '*';

export function providerKey(target: ProviderTarget, env: Env): string {
  const { runtime } = target;
  if (runtime === 'openai') {
    const endpoint = {
      baseUrl: target.openai?.base_url ?? null,
      apiKeyEnv: target.openai?.api_key_env ?? null,
    };
    const base = endpointBase(endpoint, env);
    const keyVar = endpointKeyVar(endpoint, base);
    return spell(
      runtime,
      endpointName(base),
      keyVar && env[keyVar] ? fingerprint(keyVar, env[keyVar]) : null,
    );
  }
  if (isCliRuntime(runtime)) {
    const account = RUNTIMES[runtime].accounts;
    let endpoint: string | null = null;
    for (const [variable, name] of account.endpoint) {
      const value = env[variable];
      if (!value) continue;
      endpoint = name ?? endpointName(value);
      break;
    }
    const identity = account.identity.find((variable) => env[variable]);
    return spell(runtime, endpoint, identity ? fingerprint(identity, env[identity]!) : null);
  }
  return runtime;
}

/** The runtime a provider key belongs to (`openai@…#…` → `openai`). */
export function runtimeOfKey(key: string): string {
  return /^[a-z]+/.exec(key)?.[0] ?? key;
}

/** The provider windows closed now, looked up by provider key. */
export class ClosedProviders {
  private readonly windows: ReadonlyMap<string, string>;

  constructor(windows: readonly ProviderWindow[]) {
    this.windows = new Map(windows.map((w) => [w.provider, w.resetAt]));
  }

  /** When `key` reopens (its own window or its runtime's whole one, the later), or undefined: open. */
  until(key: string): string | undefined {
    if (this.windows.size === 0) return undefined;
    const own = this.windows.get(key);
    const all = this.windows.get(`${runtimeOfKey(key)}${ANY_ACCOUNT}`);
    if (own === undefined) return all;
    return all !== undefined && all > own ? all : own;
  }

  isClosed(key: string): boolean {
    return this.until(key) !== undefined;
  }
}

function spell(runtime: string, endpoint: string | null, identity: string | null): string {
  return `${runtime}${endpoint ? `@${endpoint}` : ''}${identity ? `#${identity}` : ''}`;
}

/** `https://api.openai.com/v1` → `api.openai.com`, `http://127.0.0.1:11434/v1` → `127.0.0.1:11434`. */
function endpointName(url: string): string {
  try {
    const parsed = new URL(url);
    const path = parsed.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
    return `${parsed.host}${path}`;
  } catch {
    return url;
  }
}

// asked for on every stage (and each fallback) with the same few variables: hashed once each
const fingerprints = new Map<string, string>();

function fingerprint(variable: string, value: string): string {
  const named = `${variable}=${value}`;
  let print = fingerprints.get(named);
  if (print === undefined) {
    print = createHash('sha256').update(named).digest('hex').slice(0, 8);
    fingerprints.set(named, print);
  }
  return print;
}
