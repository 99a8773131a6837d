import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serve } from '@hono/node-server';
import { afterEach, describe, expect, it } from 'vitest';
import { agent, pipeline } from '../engine/test-pipelines.js';
import { defaultConfig } from '../pipeline/config.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { createApp, type TroupeApp } from './app.js';

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup) c();
  cleanup = [];
});

async function start(): Promise<{ troupe: TroupeApp; url: string }> {
  const root = mkdtempSync(path.join(tmpdir(), 'troupe-sse-'));
  const store = openSqliteStore(path.join(root, 'troupe.db'));
  const troupe = createApp({ project: { root, store, config: defaultConfig() }, pollMs: 20 });
  troupe.start();
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: troupe.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  cleanup.push(() => {
    troupe.stop();
    server.close();
    store.close();
  });
  return { troupe, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const waitUntil = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
};

describe('SSE streams', () => {
  // how soon (the latency) is measured in bench/server.js, not here: a test asserts no timings
  it('deliver an event appended in the server, and let go of a client that leaves', async () => {
    const { troupe, url } = await start();
    const controller = new AbortController();
    const response = await fetch(`${url}/api/events`, { signal: controller.signal });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    expect((await reader.read()).value).toContain('retry: 1000');
    const reading = reader.read();
    await waitUntil(() => troupe.ctx.hub.waiting === 1);

    const id = troupe.ctx.tasks.start({ pipeline: pipeline(agent('solo')), input: 'hello' });
    const { value } = await reading;
    expect(value).toContain(`"taskId":"${id}"`);
    expect(value).toMatch(/^id: 1$/m);

    controller.abort();
    await waitUntil(() => troupe.ctx.hub.waiting === 0);
  });
});
