import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectTaskService } from '../../app/project.js';
import { defaultConfig } from '../../pipeline/config.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { agent, handoff, pipeline } from '../test-pipelines.js';

describe('executor: stopping a run without ending the task', () => {
  const stores: Array<{ close(): void }> = [];
  afterEach(() => {
    for (const store of stores.splice(0)) store.close();
  });

  it('a stop signal aborts the running stage and records nothing more; the next run does the stage again', async () => {
    const root = mkdtempSync(join(tmpdir(), 'troupe-exec-'));
    const store = openSqliteStore(join(root, '.troupe', 'troupe.db'));
    stores.push(store);
    const service = projectTaskService(root, store, defaultConfig());
    const p = pipeline(agent('slow', { handoffs: [handoff('next')] }), agent('next'));
    const id = service.start({
      pipeline: p,
      input: 'go',
      script: {
        agents: { slow: [{ reply: 'done slowly', delay_ms: 400 }], next: ['next done'] },
        gates: {},
        human: {},
      },
    });
    const stop = new AbortController();
    // stopped once the slow stage is under way
    const observer = {
      onEvent: (event: { type: string }) => {
        if (event.type === 'stage_started') stop.abort();
      },
    };
    const stopped = await service.continue(id, observer, stop.signal);
    expect(stopped.status).toBe('running');
    expect(stopped.stages.map((s) => [s.agent, s.status])).toEqual([['slow', 'running']]);
    const types = [...store.events(id)].map((e) => e.type);
    expect(types).toEqual(['task_created', 'stage_started']);

    const finished = await service.continue(id);
    expect(finished.status).toBe('completed');
    expect(finished.stages.map((s) => [s.agent, s.output])).toEqual([
      ['slow', 'done slowly'],
      ['next', 'next done'],
    ]);
    expect([...store.events(id)].map((e) => e.type)).toContain('stage_interrupted');
  });
});

describe('executor: commits', () => {
  it("a stage's completion, its handoff and the next stage's start are one transaction", async () => {
    const root = mkdtempSync(join(tmpdir(), 'troupe-exec-'));
    const store = openSqliteStore(join(root, '.troupe', 'troupe.db'));
    let appends = 0;
    const counting = new Proxy(store, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (key !== 'append') return value;
        return (...args: Parameters<typeof store.append>) => {
          appends++;
          return store.append(...args);
        };
      },
    });
    try {
      const service = projectTaskService(root, counting, defaultConfig());
      const p = pipeline(
        agent('a', { handoffs: [handoff('b')] }),
        agent('b', { handoffs: [handoff('c')] }),
        agent('c'),
      );
      const id = service.start({
        pipeline: p,
        input: 'go',
        script: { agents: { a: ['A'], b: ['B'], c: ['C'] }, gates: {}, human: {} },
      });
      expect((await service.continue(id)).status).toBe('completed');
      // start a; complete a + hand off + start b; … ; complete c + task_completed
      expect(appends).toBe(4);
    } finally {
      store.close();
    }
  });
});

describe('executor: the poller', () => {
  it("passes over this process's own events unread, and still applies one another process wrote", async () => {
    const root = mkdtempSync(join(tmpdir(), 'troupe-exec-'));
    const file = join(root, '.troupe', 'troupe.db');
    const store = openSqliteStore(file);
    const other = openSqliteStore(file);
    const polled: string[] = [];
    const watching = new Proxy(store, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (key !== 'events') return value;
        return function* (taskId: string, afterSeq = 0) {
          for (const event of store.events(taskId, afterSeq)) {
            if (afterSeq > 0) polled.push(event.type);
            yield event;
          }
        };
      },
    });
    try {
      const service = projectTaskService(root, watching, defaultConfig());
      const id = service.start({
        pipeline: pipeline(agent('slow', { handoffs: [handoff('next')] }), agent('next')),
        input: 'go',
        script: {
          agents: { slow: [{ reply: 'done slowly', delay_ms: 700 }], next: ['next done'] },
          gates: {},
          human: {},
        },
      });
      setTimeout(() => {
        other.append(id, [{ type: 'budget_warning', used: 9, limit: 10, unit: 'tokens' }], {
          status: 'running',
        });
      }, 100);
      const done = await service.continue(id);
      expect(done.status).toBe('completed');
      expect(done.budgetWarned).toBe(true);
      expect(polled).toEqual(['budget_warning']);
    } finally {
      store.close();
      other.close();
    }
  });
});
