import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectTaskService } from '../../app/project.js';
import type { EventStore } from '../../core/event-store.js';
import { type Runtime, RuntimeError, type RuntimeEvent, type RuntimeRequest } from '../../core/runtime.js';
import { defaultConfig } from '../../pipeline/config.js';
import { runCommandGate } from '../../runtimes/command-gate.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { TaskFiles } from '../../store/task-files.js';
import { agent, handoff, pipeline } from '../test-pipelines.js';
import { runTask } from './execute.js';

/**
 * The reliability property: a provider that rate-limits 20 concurrent tasks at random
 * points. The provider here is a fake (no real one can be limited on demand) that checks troupe
 * against its own rules: it records every call, and when it sees a call while troupe's store
 * says its window is closed, or a completed stage asked for twice, the test fails.
 */

/** A small seeded generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Call {
  task: string;
  stage: string;
  at: number;
}

function limitingProvider(store: EventStore, seed: number) {
  const next = random(seed);
  const calls: Call[] = [];
  const violations: string[] = [];
  const completed = new Set<string>();
  let limits = 0;
  const runtime: Runtime = {
    name: 'claude',
    async *run(request: RuntimeRequest): AsyncGenerator<RuntimeEvent> {
      const [task, stage] = /TASK (\S+) STAGE (\S+)/.exec(request.prompt)!.slice(1) as [string, string];
      const at = Date.now();
      calls.push({ task, stage, at });
      const closed = store.closedProviders(new Date(at)).find((w) => w.provider === 'claude');
      if (closed)
        violations.push(
          `${task}/${stage} called at ${new Date(at).toISOString()}, closed until ${closed.resetAt}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 5 + next() * 20));
      if (next() < 0.15) {
        limits++;
        const resetAt = new Date(Date.now() + 300 + next() * 500);
        throw new RuntimeError('rate_limited', 'usage limit reached', { resetAt });
      }
      const key = `${task}/${stage}/${request.agentId}`;
      if (completed.has(key)) violations.push(`${key} ran again after it completed`);
      completed.add(key);
      const text = `TASK ${task}`;
      yield { type: 'text', text };
      yield { type: 'result', text, usage: { input_tokens: 10, output_tokens: 2 } };
    },
  };
  return { runtime, calls, violations, limits: () => limits };
}

describe('rate limits under load', () => {
  const stores: EventStore[] = [];
  afterEach(() => {
    for (const store of stores.splice(0)) store.close();
  });

  // how soon after the reset a stage resumes is measured in bench/limits.js (a test asserts no timings)
  it('20 concurrent tasks limited at random points all complete; no call into a closed window, nothing twice, each resumed after its reset', async () => {
    const root = mkdtempSync(join(tmpdir(), 'troupe-limits-'));
    const store = openSqliteStore(join(root, '.troupe', 'troupe.db'));
    stores.push(store);
    const service = projectTaskService(root, store, defaultConfig());
    // each agent hands on "TASK tN", so every prompt names its task and stage
    const prompt = '{{ input }} STAGE {{ agent }}';
    const p = pipeline(
      agent('plan', { system_prompt: prompt.replace('{{ agent }}', 'plan'), handoffs: [handoff('build')] }),
      agent('build', { system_prompt: prompt.replace('{{ agent }}', 'build'), handoffs: [handoff('check')] }),
      agent('check', { system_prompt: prompt.replace('{{ agent }}', 'check') }),
    );
    const provider = limitingProvider(store, 20261129);
    const ids = Array.from({ length: 20 }, (_, i) => service.start({ pipeline: p, input: `TASK t${i}` }));
    const states = await Promise.all(
      ids.map((id) =>
        runTask(id, {
          store,
          files: TaskFiles.forTask(root, id),
          runtimeFor: () => provider.runtime,
          human: () => ({ answer: () => undefined }),
          commandGate: runCommandGate,
          pollMs: 50,
        }),
      ),
    );

    expect(states.map((s) => s.failure?.reason ?? s.status)).toEqual(ids.map(() => 'completed'));
    expect(provider.limits()).toBeGreaterThan(3); // the provider did limit, many times
    expect(provider.violations).toEqual([]);
    let measured = 0;
    for (const id of ids) {
      const events = [...store.events(id)];
      expect(
        events
          .filter((e) => e.type === 'stage_completed')
          .map((e) => e.type === 'stage_completed' && e.agent),
      ).toEqual(['plan', 'build', 'check']);
      // after each wait, the task called again, and not before the reset it waited for
      const first = events[0]!;
      const input = first.type === 'task_created' ? first.input.slice('TASK '.length) : '';
      const calls = provider.calls.filter((c) => c.task === input);
      for (const wait of events.filter((e) => e.type === 'rate_limited')) {
        if (wait.type !== 'rate_limited') continue;
        const reset = Date.parse(wait.resetAt);
        const nextCall = calls.find((c) => c.at >= Date.parse(wait.at));
        expect(nextCall, `${id} never called again after waiting`).toBeDefined();
        const later = events.find((e) => e.type === 'rate_limited' && e.seq > wait.seq);
        // a second wait before the call: the latency is measured from the last one
        if (later && Date.parse(later.at) <= nextCall!.at) continue;
        expect(nextCall!.at - reset).toBeGreaterThanOrEqual(-5);
        measured++;
      }
    }
    expect(measured).toBeGreaterThan(10); // most tasks waited at least once
  }, 60_000);

  it('a reset in the past or unparseable backs off 30 s; one more than a day away is waited for as given', async () => {
    const root = mkdtempSync(join(tmpdir(), 'troupe-limits-'));
    const store = openSqliteStore(join(root, '.troupe', 'troupe.db'));
    stores.push(store);
    const service = projectTaskService(root, store, defaultConfig());
    const farAway = new Date(Date.now() + 48 * 3600_000);
    // a provider each: windows are shared, and each case closes its own
    const cases: Array<[string, Date | undefined, 'claude' | 'gemini' | 'codex']> = [
      ['past', new Date(Date.now() - 60_000), 'claude'],
      ['unparseable', undefined, 'gemini'],
      ['far', farAway, 'codex'],
    ];
    for (const [name, resetAt, runtime] of cases) {
      const limited: Runtime = {
        name: 'claude',
        // biome-ignore lint/correctness/useYield: it only ever meets the limit
        async *run() {
          throw new RuntimeError('rate_limited', `limit (${name})`, resetAt ? { resetAt } : {});
        },
      };
      const id = service.start({ pipeline: pipeline(agent('a', { runtime })), input: name });
      const stop = new AbortController();
      const before = Date.now();
      const state = await runTask(id, {
        store,
        files: TaskFiles.forTask(root, id),
        runtimeFor: () => limited,
        human: () => ({ answer: () => undefined }),
        commandGate: runCommandGate,
        observer: { onEvent: (e) => e.type === 'rate_limited' && stop.abort() },
        stop: stop.signal,
      });
      expect(state.status).toBe('waiting');
      const wait = [...store.events(id)].find((e) => e.type === 'rate_limited');
      const until = wait?.type === 'rate_limited' ? Date.parse(wait.resetAt) : Number.NaN;
      if (name === 'far') expect(until).toBe(farAway.getTime());
      else {
        expect(until - before).toBeGreaterThanOrEqual(30_000);
        expect(until - Date.now()).toBeLessThanOrEqual(30_000);
      }
    }
  });

  it("a stage limited mid-call continues the CLI's own session when its provider reopens", async () => {
    const root = mkdtempSync(join(tmpdir(), 'troupe-limits-'));
    const store = openSqliteStore(join(root, '.troupe', 'troupe.db'));
    stores.push(store);
    const service = projectTaskService(root, store, defaultConfig());
    const resumed: Array<string | null> = [];
    let calls = 0;
    const cli: Runtime = {
      name: 'claude',
      async *run(request) {
        calls++;
        resumed.push(request.resumeSessionId);
        if (calls === 1) {
          throw new RuntimeError('usage_limit', 'limit reached', {
            resetAt: new Date(Date.now() + 300),
            meta: { session_id: 'session-of-the-limited-call' },
          });
        }
        yield { type: 'result', text: 'done', usage: { input_tokens: 1, output_tokens: 1 } };
      },
    };
    const id = service.start({ pipeline: pipeline(agent('a', { runtime: 'codex' })), input: 'go' });
    const state = await runTask(id, {
      store,
      files: TaskFiles.forTask(root, id),
      runtimeFor: () => cli,
      human: () => ({ answer: () => undefined }),
      commandGate: runCommandGate,
    });
    expect(state.status).toBe('completed');
    expect(resumed).toEqual([null, 'session-of-the-limited-call']);
  });
});
