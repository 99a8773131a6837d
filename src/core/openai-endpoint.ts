import type { OpenAiEndpoint } from './runtime.js';

/**
 * Where an `openai` agent's requests go and which key goes with them: said once for the runtime
 * that sends them, `troupe doctor` that checks them, and the provider key of their rate limits.
 */

export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** The agent's `base_url`, else the user's own OPENAI_BASE_URL, else OpenAI's API (no trailing slash). */
export function endpointBase(
  endpoint: OpenAiEndpoint | null | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string {
  return (endpoint?.baseUrl ?? env.OPENAI_BASE_URL ?? DEFAULT_OPENAI_BASE_URL).replace(/\/+$/, '');
}

/**
 * The variable whose key goes to this endpoint: the one the agent names (`api_key_env`), else
 * OPENAI_API_KEY, but only to OpenAI's own API or to the user's own OPENAI_BASE_URL. A `base_url`
 * in a pipeline (maybe imported from someone else's) never gets the user's OpenAI key unasked.
 */
export function endpointKeyVar(endpoint: OpenAiEndpoint, base: string): string | null {
  if (endpoint.apiKeyEnv) return endpoint.apiKeyEnv;
  return !endpoint.baseUrl || isOpenAiApi(base) ? 'OPENAI_API_KEY' : null;
}

export function isOpenAiApi(base: string): boolean {
  try {
    const url = new URL(base);
    return url.protocol === 'https:' && url.hostname === 'api.openai.com';
  } catch {
    return false;
  }
}
