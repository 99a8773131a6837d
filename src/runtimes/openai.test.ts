import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseRequest, collect, failureOf, runtimeContract } from './contract.js';
import { openaiRuntime } from './openai.js';

/**
 * A local stand-in for an OpenAI-compatible endpoint; the first path segment picks its
 * behaviour: ok, split, nousage, 429, 429-headers, quota, 401, 500, drop, hang, context, echo.
 */
const requests: Array<{ url: string; auth: string | undefined; body: Record<string, unknown> }> = [];
let server: Server;
let base = '';

const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'gpt-test', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const body = JSON.parse(await read(req));
    const mode = req.url!.split('/')[1]!;
    requests.push({ url: req.url!, auth: req.headers.authorization, body });
    const error = (status: number, payload: object, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(payload));
    };
    switch (mode) {
      case '429':
        return error(
          429,
          {
            error: {
              message: 'Rate limit reached for requests',
              type: 'requests',
              code: 'rate_limit_exceeded',
            },
          },
          { 'retry-after': '7' },
        );
      case '429-headers':
        return error(
          429,
          { error: { message: 'Rate limit reached', code: 'rate_limit_exceeded' } },
          { 'x-ratelimit-reset-requests': '1s', 'x-ratelimit-reset-tokens': '6m0s' },
        );
      case '429-tokens':
        return error(
          429,
          {
            error: {
              message:
                'Rate limit reached for gpt-4.1-mini in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.',
              code: 'rate_limit_exceeded',
            },
          },
          { 'x-ratelimit-reset-requests': '6m0s', 'x-ratelimit-reset-tokens': '4s' },
        );
      case '429-spent':
        return error(
          429,
          { error: { message: 'Rate limit reached', code: 'rate_limit_exceeded' } },
          {
            'x-ratelimit-remaining-requests': '0',
            'x-ratelimit-remaining-tokens': '18000',
            'x-ratelimit-reset-requests': '12s',
            'x-ratelimit-reset-tokens': '1m2.5s',
          },
        );
      case 'google-minute':
        // Google's OpenAI-compatible endpoint answers a list of errors
        return error(429, [
          {
            error: {
              code: 429,
              message:
                'You exceeded your current quota, please check your plan and billing details.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10, model: gemini-2.5-flash\nPlease retry in 30.5s.',
              status: 'RESOURCE_EXHAUSTED',
              details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '30s' }],
            },
          },
        ]);
      case 'google-no-tier':
        return error(429, [
          {
            error: {
              code: 429,
              message:
                'You exceeded your current quota, please check your plan and billing details.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0, model: gemini-2.5-pro',
              status: 'RESOURCE_EXHAUSTED',
            },
          },
        ]);
      case 'quota':
        return error(429, {
          error: {
            message: 'You exceeded your current quota, please check your plan and billing details.',
            type: 'insufficient_quota',
            code: 'insufficient_quota',
          },
        });
      case '401':
        return error(401, {
          error: { message: 'Incorrect API key provided: sk-test-secret.', code: 'invalid_api_key' },
        });
      case '500':
        return error(500, { error: { message: 'The server had an error while processing your request.' } });
      case 'context':
        return error(400, {
          error: {
            message: "This model's maximum context length is 8192 tokens.",
            code: 'context_length_exceeded',
          },
        });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (mode === 'hang') {
      res.write(chunk({ role: 'assistant', content: '' }));
      return;
    }
    const text =
      mode === 'echo' ? JSON.stringify({ argv: [], stdin: JSON.stringify(body.messages) }) : 'hi from mock';
    res.write(chunk({ role: 'assistant', content: '' }));
    const parts = mode === 'split' || mode === 'drop' ? (text.match(/.{1,5}/gs) ?? []) : [text];
    for (const part of parts) res.write(chunk({ content: part }));
    if (mode === 'drop') {
      setTimeout(() => res.socket?.destroy(), 50);
      return;
    }
    res.write(
      `data: ${JSON.stringify({ id: 'c1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
    );
    if (mode !== 'nousage') {
      res.write(
        `data: ${JSON.stringify({ id: 'c1', choices: [], usage: { prompt_tokens: 30, completion_tokens: 5, total_tokens: 35, prompt_tokens_details: { cached_tokens: 10 } } })}\n\n`,
      );
    }
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
});

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => resolve(text));
  });
}

const NOW = new Date('2026-11-29T10:00:00Z');
const make = (scenario: string) =>
  openaiRuntime({
    env: { OPENAI_BASE_URL: `${base}/${scenario}/v1`, OPENAI_API_KEY: 'sk-test-secret' },
    now: () => NOW,
  });

runtimeContract('openai', make, {
  success: {
    scenario: 'ok',
    text: 'hi from mock',
    usage: { input_tokens: 20, output_tokens: 5, cache_read_tokens: 10 },
  },
  failures: [
    { scenario: '429', kind: 'rate_limited', resetAt: new Date(NOW.getTime() + 7000) },
    // nothing says which limit was hit: the later reset
    { scenario: '429-headers', kind: 'rate_limited', resetAt: new Date(NOW.getTime() + 360_000) },
    // the reset of the limit that was hit: the message names it, or its remaining count is 0
    { scenario: '429-tokens', kind: 'rate_limited', resetAt: new Date(NOW.getTime() + 4000) },
    { scenario: '429-spent', kind: 'rate_limited', resetAt: new Date(NOW.getTime() + 12_000) },
    { scenario: 'quota', kind: 'quota_billing' },
    // Google: a per-minute quota is a rate limit until its RetryInfo.retryDelay; none on the plan, billing
    { scenario: 'google-minute', kind: 'rate_limited', resetAt: new Date(NOW.getTime() + 30_000) },
    { scenario: 'google-no-tier', kind: 'quota_billing' },
    { scenario: '401', kind: 'auth' },
    { scenario: '500', kind: 'overloaded' },
    { scenario: 'drop', kind: 'network' },
    { scenario: 'context', kind: 'context_overflow' },
  ],
  hang: { scenario: 'hang' },
  rawLog: true,
  request: { model: 'gpt-test' },
});

describe('openai runtime', () => {
  it('streams a chat completion with the key from the environment and usage requested', async () => {
    requests.length = 0;
    const events = await collect(make('split'), baseRequest({ model: 'gpt-test' }));
    expect(events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text)).toEqual([
      'hi fr',
      'om mo',
      'ck',
    ]);
    expect(requests[0]).toMatchObject({
      url: '/split/v1/chat/completions',
      auth: 'Bearer sk-test-secret',
      body: {
        model: 'gpt-test',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'say hi' }],
      },
    });
  });

  it("sends OPENAI_API_KEY only to OpenAI's API or the user's own OPENAI_BASE_URL; a pipeline's base_url gets the key it names", async () => {
    const env = { OPENAI_API_KEY: 'sk-users-own', MY_KEY: 'sk-named' };
    const at = (apiKeyEnv: string | null) =>
      collect(
        openaiRuntime({ env }),
        baseRequest({
          model: 'llama3.2',
          runtimeOptions: { openai: { baseUrl: `${base}/ok/v1`, apiKeyEnv } },
        }),
      );
    requests.length = 0;
    await at(null);
    await at('MY_KEY');
    expect(requests.map((r) => r.auth)).toEqual([undefined, 'Bearer sk-named']);
    const openai = stubFetch();
    await collect(
      openaiRuntime({ env, fetch: openai.fetch }),
      baseRequest({
        model: 'gpt-4.1',
        runtimeOptions: { openai: { baseUrl: 'https://api.openai.com/v1', apiKeyEnv: null } },
      }),
    );
    expect(openai.seen[0]).toMatchObject({ auth: 'Bearer sk-users-own' });
  });

  it('says that no key was sent when an endpoint without api_key_env refuses the call', async () => {
    const error = await failureOf(
      openaiRuntime({ env: { OPENAI_API_KEY: 'sk-users-own' } }),
      baseRequest({ model: 'm', runtimeOptions: { openai: { baseUrl: `${base}/401/v1`, apiKeyEnv: null } } }),
    );
    expect(error).toMatchObject({
      kind: 'auth',
      hint: expect.stringMatching(/^no key was sent: .*openai.api_key_env/),
    });
  });

  it("sends reasoning_effort only to OpenAI's reasoning models", async () => {
    const sent = async (model: string, baseUrl: string) => {
      const openai = stubFetch();
      await collect(
        openaiRuntime({ env: {}, fetch: openai.fetch }),
        baseRequest({ model, effort: 'max', runtimeOptions: { openai: { baseUrl, apiKeyEnv: null } } }),
      );
      return openai.seen[0]!.body.reasoning_effort;
    };
    expect(await sent('o4-mini', 'https://api.openai.com/v1')).toBe('high');
    expect(await sent('gpt-5.5', 'https://api.openai.com/v1')).toBe('high');
    expect(await sent('gpt-4.1', 'https://api.openai.com/v1')).toBeUndefined();
    expect(await sent('gpt-5-chat-latest', 'https://api.openai.com/v1')).toBeUndefined();
    expect(await sent('o4-mini', 'http://localhost:11434/v1')).toBeUndefined();
  });

  it('sends a gate its system prompt as a system message', async () => {
    requests.length = 0;
    await collect(make('ok'), baseRequest({ model: 'gpt-test', purpose: 'gate', systemPrompt: 'judge' }));
    expect(requests[0]!.body.messages).toEqual([
      { role: 'system', content: 'judge' },
      { role: 'user', content: 'say hi' },
    ]);
  });

  it('never lets the key into a message, the raw log or an event', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'troupe-openai-'));
    const rawLogPath = path.join(dir, '1.jsonl');
    const error = await failureOf(make('401'), baseRequest({ model: 'gpt-test', rawLogPath }));
    expect(error.kind).toBe('auth');
    expect(error.message).not.toContain('sk-test-secret');
    expect(readFileSync(rawLogPath, 'utf8')).not.toContain('sk-test-secret');
  });

  it('keeps what streamed before a dropped connection', async () => {
    const error = await failureOf(make('drop'), baseRequest({ model: 'gpt-test' }));
    expect(error.options.partialOutput).toBe('hi from mock');
  });

  it('counts tokens itself when the server sends no usage', async () => {
    const events = await collect(make('nousage'), baseRequest({ model: 'gpt-test' }));
    expect(events.at(-1)).toMatchObject({ type: 'result', usage: { input_tokens: 2, output_tokens: 3 } });
  });

  it('names the missing key variable, and needs a model', async () => {
    const runtime = openaiRuntime({ env: {} });
    const noKey = await failureOf(
      runtime,
      baseRequest({ model: 'm', runtimeOptions: { openai: { baseUrl: base, apiKeyEnv: 'MY_KEY' } } }),
    );
    expect(noKey).toMatchObject({ kind: 'auth', message: expect.stringContaining('MY_KEY') });
    expect((await failureOf(runtime, baseRequest())).message).toContain('no `model`');
  });

  it('reports an endpoint that cannot be reached as network', async () => {
    const runtime = openaiRuntime({ env: {} });
    const error = await failureOf(
      runtime,
      baseRequest({
        model: 'm',
        runtimeOptions: { openai: { baseUrl: 'http://127.0.0.1:9/v1', apiKeyEnv: null } },
      }),
    );
    expect(error.kind).toBe('network');
  });
});

/** A fetch that answers one short completion and keeps what it was asked (for api.openai.com). */
function stubFetch() {
  const seen: Array<{ url: string; auth: string | undefined; body: Record<string, unknown> }> = [];
  const fetch: typeof globalThis.fetch = async (url, init) => {
    const headers = (init?.headers ?? {}) as Record<string, string>;
    seen.push({ url: String(url), auth: headers.authorization, body: JSON.parse(String(init?.body)) });
    const sse = 'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n';
    return new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
  return { fetch, seen };
}
