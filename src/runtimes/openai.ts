import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { messageOf } from '../core/errors.js';
import { endpointBase, endpointKeyVar, isOpenAiApi } from '../core/openai-endpoint.js';
import {
  type Runtime,
  RuntimeError,
  type RuntimeErrorKind,
  type RuntimeEvent,
  type RuntimeRequest,
} from '../core/runtime.js';
import type { Usage } from '../core/usage.js';
import { classifyMessage, hintFor } from './classify.js';
import { num } from './cli-run.js';
import { parseJsonLine } from './jsonl.js';
import { parseDuration, parseGeminiReset, parseRetryAfter } from './reset-time.js';

/**
 * Any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama, vLLM, LM Studio), streamed.
 * The key comes only from the environment (see `endpointKeyVar`); it is never written to an
 * event, a log or a message.
 */

export interface OpenAiOptions {
  /** Where the key variable is read (default process.env). */
  env?: Record<string, string | undefined>;
  fetch?: typeof fetch;
  now?: () => Date;
}

const EFFORT = { low: 'low', medium: 'medium', high: 'high', max: 'high' } as const;

type Json = Record<string, unknown>;

export function openaiRuntime(options: OpenAiOptions = {}): Runtime {
  const now = options.now ?? (() => new Date());
  return {
    name: 'openai',
    run: (request) => stream(request, options, now),
  };
}

async function* stream(
  request: RuntimeRequest,
  options: OpenAiOptions,
  now: () => Date,
): AsyncGenerator<RuntimeEvent> {
  const env = options.env ?? process.env;
  const endpoint = request.runtimeOptions?.openai ?? { baseUrl: null, apiKeyEnv: null };
  const base = endpointBase(endpoint, env);
  const keyVar = endpointKeyVar(endpoint, base);
  const key = keyVar ? env[keyVar] : undefined;
  if (endpoint.apiKeyEnv && !key) {
    throw new RuntimeError('auth', `the environment variable ${keyVar} (openai.api_key_env) is not set`, {
      hint: `export ${keyVar}=… before running troupe`,
    });
  }
  if (!request.model) {
    throw new RuntimeError('crashed', `agent '${request.agentId}' has runtime openai but no \`model\``, {
      hint: 'add `model:` (for example gpt-4.1-mini, or llama3.2 for Ollama)',
    });
  }
  const redact = (text: string) => (key ? text.split(key).join('***') : text);
  const timeout = AbortSignal.timeout(Math.max(1, request.timeoutMs));
  const signal = AbortSignal.any([request.signal, timeout]);
  const aborted = () =>
    timeout.aborted && !request.signal.aborted
      ? new RuntimeError('timeout', `timed out after ${Math.round(request.timeoutMs / 1000)}s`)
      : request.signal.reason instanceof RuntimeError
        ? request.signal.reason
        : new RuntimeError('cancelled', 'cancelled');
  const messages = [
    ...(request.purpose === 'gate' && request.systemPrompt.trim()
      ? [{ role: 'system', content: request.systemPrompt }]
      : []),
    { role: 'user', content: request.prompt },
  ];
  const body: Json = {
    model: request.model,
    messages,
    stream: true,
    stream_options: { include_usage: true },
    ...(request.effort && acceptsReasoningEffort(base, request.model)
      ? { reasoning_effort: EFFORT[request.effort] }
      : {}),
  };
  const raw = request.rawLogPath ? rawLog(request.rawLogPath) : null;
  await raw?.({
    type: 'troupe.request',
    at: new Date().toISOString(),
    url: `${base}/chat/completions`,
    model: request.model,
  });

  let response: Response;
  try {
    response = await (options.fetch ?? fetch)(`${base}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        ...(key ? { authorization: `Bearer ${key}` } : {}),
      },
      body: JSON.stringify(body),
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw aborted();
    throw networkError(error, base, redact);
  }
  if (!response.ok) {
    const text = redact(await response.text().catch(() => ''));
    await raw?.({ type: 'troupe.response', status: response.status, body: text.slice(0, 4000) });
    const error = httpError(response, text, now());
    if (error.kind === 'auth' && !key) {
      throw new RuntimeError('auth', error.message, {
        hint: `no key was sent: troupe sends OPENAI_API_KEY only to api.openai.com; name this endpoint's key variable with \`openai.api_key_env\``,
      });
    }
    throw error;
  }

  let text = '';
  let usage: Usage | null = null;
  let finished = false;
  let done = false;
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = response.body?.getReader();
  if (!reader) throw new RuntimeError('network', `${base} answered without a body`);
  try {
    while (!done) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (signal.aborted) throw aborted();
        throw withPartial(networkError(error, base, redact, 'the connection dropped mid-stream'), text);
      }
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      let nl = buffer.indexOf('\n');
      while (nl !== -1) {
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        nl = buffer.indexOf('\n');
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        await raw?.(data);
        if (data === '[DONE]') {
          done = true;
          break;
        }
        const event = parseJsonLine(data);
        if (!event) continue;
        if (event.error) {
          const error = event.error as Json;
          const message = redact(String(error.message ?? JSON.stringify(error)));
          throw withPartial(
            new RuntimeError(
              classifyMessage(`${message} ${String(error.code ?? '')} ${String(error.type ?? '')}`) ??
                'crashed',
              message,
            ),
            text,
          );
        }
        const choice = (Array.isArray(event.choices) ? event.choices[0] : undefined) as Json | undefined;
        const delta = (choice?.delta ?? {}) as Json;
        const reasoning = delta.reasoning_content ?? delta.reasoning;
        if (typeof reasoning === 'string' && reasoning) yield { type: 'thinking', text: reasoning };
        if (typeof delta.content === 'string' && delta.content) {
          text += delta.content;
          yield { type: 'text', text: delta.content };
        }
        if (choice?.finish_reason) finished = true;
        if (event.usage && typeof event.usage === 'object') usage = openaiUsage(event.usage as Json);
      }
      if (signal.aborted) throw aborted();
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
  if (signal.aborted) throw aborted();
  if (!done && !finished) {
    throw withPartial(
      new RuntimeError('network', `the stream from ${base} ended before the answer was complete`),
      text,
    );
  }
  yield {
    type: 'result',
    text,
    usage: usage ?? (await estimate(request.prompt, text)),
    meta: { model: request.model },
  };
}

/**
 * `reasoning_effort` only where it is taken: OpenAI's reasoning models (o1, o3, o4-mini, gpt-5…;
 * not gpt-5's chat models). Others reject the parameter or ignore it (docs/runtimes.md).
 */
export function acceptsReasoningEffort(base: string, model: string): boolean {
  return isOpenAiApi(base) && /^(?:o[1-9]|gpt-5)(?!.*-chat)/.test(model);
}

function httpError(response: Response, body: string, now: Date): RuntimeError {
  const parsed = parseJsonLine(body);
  const error = (parsed?.error ?? {}) as Json;
  const detail = typeof error === 'string' ? error : String(error.message ?? body.slice(0, 500));
  const code = `${String(error.code ?? '')} ${String(error.type ?? '')}`;
  const message = `${response.status} ${response.statusText || 'error'}${detail ? `: ${detail}` : ''}`;
  let kind: RuntimeErrorKind;
  let resetAt: Date | undefined;
  const s = response.status;
  if (/insufficient_quota|billing/i.test(code) || s === 402) kind = 'quota_billing';
  else if (s === 429) {
    // Google's endpoint words its limits as quotas (classify.ts): its body says which it is
    const said = classifyMessage(body);
    kind = said === 'quota_billing' || said === 'usage_limit' ? said : 'rate_limited';
    if (kind !== 'quota_billing')
      resetAt =
        rateLimitReset(response.headers, now, limitHit(error, detail, response.headers)) ??
        parseGeminiReset(body, now);
  } else if (s === 401 || s === 403) kind = 'auth';
  else if (/context_length_exceeded/.test(code) || classifyMessage(detail) === 'context_overflow')
    kind = 'context_overflow';
  else if (s >= 500) kind = 'overloaded';
  else kind = 'crashed';
  return new RuntimeError(kind, message, {
    ...(resetAt ? { resetAt } : {}),
    ...(hintFor(kind, 'openai') ? { hint: hintFor(kind, 'openai')! } : {}),
  });
}

type LimitHit = 'requests' | 'tokens';

/**
 * Which of the endpoint's limits a 429 is about: the error's `type` (OpenAI: `requests` or
 * `tokens`), its message ("… on tokens per min (TPM)"), else the one whose `x-ratelimit-remaining-*`
 * is 0. Null when nothing says.
 */
export function limitHit(error: Json, message: string, headers: Headers): LimitHit | null {
  if (error.type === 'requests' || error.type === 'tokens') return error.type;
  const said = /\bon (requests|tokens) per (?:min|day)\b/i.exec(message)?.[1];
  if (said) return said.toLowerCase() as LimitHit;
  const spent = (which: LimitHit) => headers.get(`x-ratelimit-remaining-${which}`)?.trim() === '0';
  if (spent('requests') !== spent('tokens')) return spent('requests') ? 'requests' : 'tokens';
  return null;
}

/**
 * `retry-after` (seconds or a date), else `x-ratelimit-reset-requests|tokens` ("6m0s"): the one
 * of the limit that was hit, or the later of the two when nothing says which (a minute's request
 * limit must not wait out the day's token limit, nor the other way round).
 */
export function rateLimitReset(headers: Headers, now: Date, hit: LimitHit | null = null): Date | undefined {
  const retryAfter = parseRetryAfter(headers.get('retry-after'), now);
  if (retryAfter) return retryAfter;
  const resetIn = (which: LimitHit) => {
    const value = headers.get(`x-ratelimit-reset-${which}`);
    return value ? parseDuration(value) : undefined;
  };
  const own = hit ? resetIn(hit) : undefined;
  if (own !== undefined) return new Date(now.getTime() + own);
  const resets = [resetIn('requests'), resetIn('tokens')].filter((ms) => ms !== undefined);
  return resets.length > 0 ? new Date(now.getTime() + Math.max(...resets)) : undefined;
}

function networkError(
  error: unknown,
  base: string,
  redact: (s: string) => string,
  what = 'cannot reach',
): RuntimeError {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const reason = cause?.code ?? cause?.message ?? messageOf(error);
  return new RuntimeError(
    'network',
    redact(`${what === 'cannot reach' ? `cannot reach ${base}` : what} (${reason})`),
  );
}

function withPartial(error: RuntimeError, text: string): RuntimeError {
  return new RuntimeError(error.kind, error.message, { ...error.options, partialOutput: text });
}

function openaiUsage(u: Json): Usage {
  const cached = num((u.prompt_tokens_details as Json | undefined)?.cached_tokens);
  return {
    input_tokens: Math.max(0, num(u.prompt_tokens) - cached),
    output_tokens: num(u.completion_tokens),
    ...(cached ? { cache_read_tokens: cached } : {}),
  };
}

/** Servers that send no usage (some local ones) get a count from the GPT tokenizer. */
async function estimate(prompt: string, reply: string): Promise<Usage> {
  const { encode } = await import('gpt-tokenizer');
  return { input_tokens: encode(prompt).length, output_tokens: encode(reply).length };
}

function rawLog(file: string): (line: string | Json) => Promise<void> {
  let ready: Promise<unknown> | null = null;
  return async (line) => {
    ready ??= mkdir(path.dirname(file), { recursive: true });
    await ready;
    await appendFile(file, `${typeof line === 'string' ? line : JSON.stringify(line)}\n`);
  };
}
