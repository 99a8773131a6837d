import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serve } from '@hono/node-server';
import { afterEach, describe, expect, it } from 'vitest';
import type { TaskEvent } from '../core/events.js';
import { agent, pipeline } from '../engine/test-pipelines.js';
import { defaultConfig } from '../pipeline/config.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { LiveFrame } from './api/events.js';
import { type LiveMessage, type LiveSource, onTaskEvents } from './api/live-events.js';
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

/** What EventSource does with a stream, as far as a listener sees it: each frame to the listeners of its name. */
class Frames implements LiveSource {
  readonly listeners = new Map<string, ((message: LiveMessage) => void)[]>();
  readonly sent: { event: string; id?: string; data: unknown }[] = [];
  addEventListener(name: string, listener: (message: LiveMessage) => void): void {
    this.listeners.set(name, [...(this.listeners.get(name) ?? []), listener]);
  }
  async read(response: Response): Promise<void> {
    const text = await response.text();
    for (const block of text.split('\n\n')) {
      const field = (name: string) => block.match(new RegExp(`^${name}: (.*)$`, 'm'))?.[1];
      const [type, data, id] = [field('event') ?? 'message', field('data'), field('id')];
      if (data === undefined) continue;
      this.sent.push({ event: type, ...(id === undefined ? {} : { id }), data: JSON.parse(data) });
      for (const listener of this.listeners.get(type) ?? []) listener({ type, data });
    }
  }
}

describe('a listener built from the declared frame names', () => {
  it("hears every task event once, rate_limited among them, and never aqm's frame of the same name", async () => {
    const { troupe, url } = await start();
    const id = troupe.ctx.tasks.start({ pipeline: pipeline(agent('solo')), input: 'hello' });
    const stage = { stage: 1, activation: 'a1', agent: 'solo' };
    const limited: TaskEvent = {
      type: 'rate_limited',
      ...stage,
      provider: 'claude',
      resetAt: '2026-12-05T09:00:00.000Z',
      message: 'usage limit',
    };
    // as another process would append them
    troupe.ctx.store.append(
      id,
      [
        { type: 'stage_started', ...stage, input: 'hello', attempt: 1 },
        { type: 'stage_output', stage: 1, text: 'half a' },
        limited,
        { type: 'gate_waiting', stage: 1, agent: 'solo' },
        { type: 'task_failed', reason: 'enough', stage: 1, errorKind: null },
      ],
      { status: 'failed' },
    );

    const frames = new Frames();
    const heard: { type: string; seq: number }[] = [];
    onTaskEvents(frames, (event) => heard.push({ type: event.type, seq: event.seq }));
    await frames.read(await fetch(`${url}/api/tasks/${id}/events`));

    const types = [
      'task_created',
      'stage_started',
      'stage_output',
      'rate_limited',
      'gate_waiting',
      'task_failed',
    ];
    expect(heard).toEqual(types.map((type, i) => ({ type, seq: i + 1 })));
    // the stream did send aqm's frames under three of those names, and each frame as declared
    const aqm = frames.sent.filter((frame) => frame.id === undefined).map((frame) => frame.event);
    expect(aqm).toEqual(['stage_start', 'stage_output', 'gate_waiting', 'task_failed']);
    for (const frame of frames.sent) expect(LiveFrame.safeParse(frame).error?.issues ?? []).toEqual([]);
  });
});
