import { describe, expect, it } from 'vitest';
import { ProviderLimiter } from './provider-limiter.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));
/** A capped provider's turn (always a promise); `provider` is a key of the runtime `runtime@…`. */
const turn = (limiter: ProviderLimiter, provider: string, signal?: AbortSignal) =>
  Promise.resolve(limiter.acquire(provider.split(/[@#]/)[0]!, provider, signal));

describe('ProviderLimiter', () => {
  it('lets at most `concurrency` calls run at once, first come first served', async () => {
    const limiter = new ProviderLimiter({ claude: { concurrency: 2, requests_per_minute: null } });
    const order: string[] = [];
    const take = (name: string) =>
      turn(limiter, 'claude').then((release) => {
        order.push(name);
        return release;
      });
    const a = take('a');
    const b = take('b');
    const c = take('c');
    await tick();
    expect(order).toEqual(['a', 'b']);
    (await a)();
    await tick();
    expect(order).toEqual(['a', 'b', 'c']);
    // a release called twice frees one place only
    (await b)();
    (await b)();
    const d = take('d');
    const e = take('e');
    await tick();
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    (await c)();
    (await d)();
    await e;
  });

  it('starts at most `requests_per_minute` calls in any 60 s', async () => {
    let now = 0;
    const limiter = new ProviderLimiter({ gemini: { concurrency: null, requests_per_minute: 2 } }, () => now);
    const started: number[] = [];
    for (let i = 0; i < 3; i++) void turn(limiter, 'gemini').then(() => started.push(now));
    await tick();
    expect(started).toEqual([0, 0]);
    now = 59_999;
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(started).toHaveLength(2);
  });

  it('leaves providers without limits alone, and an aborted wait gives its place up', async () => {
    const limiter = new ProviderLimiter({ codex: { concurrency: 1, requests_per_minute: null } });
    const release = limiter.acquire('claude', 'claude');
    expect(release).toBeTypeOf('function'); // no caps: no wait, not even a promise
    (release as () => void)();
    const first = await limiter.acquire('codex', 'codex');
    const abort = new AbortController();
    const waiting = turn(limiter, 'codex', abort.signal);
    abort.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    const next = turn(limiter, 'codex');
    first();
    await expect(next).resolves.toBeTypeOf('function');
  });

  it("caps each provider of a runtime on its own: one endpoint's calls never queue behind another's", async () => {
    const limiter = new ProviderLimiter({ openai: { concurrency: 1, requests_per_minute: null } });
    const ollama = await turn(limiter, 'openai@127.0.0.1:11434');
    const started: string[] = [];
    void turn(limiter, 'openai@api.openai.com#5d41402a').then(() => started.push('openai'));
    void turn(limiter, 'openai@127.0.0.1:11434').then(() => started.push('ollama again'));
    await tick();
    expect(started).toEqual(['openai']);
    ollama();
    await tick();
    expect(started).toEqual(['openai', 'ollama again']);
  });
});
