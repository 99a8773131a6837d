import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventStore } from '../core/event-store.js';
import type { EventOf } from '../core/events.js';
import { agent, pipeline } from '../engine/test-pipelines.js';

/** What every event store must do. SQLite runs it now; PostgreSQL will run the same suite. */
export function storeContract(name: string, open: () => EventStore) {
  const created: EventOf<'task_created'> = {
    type: 'task_created',
    pipeline: 'p',
    pipelineFile: 'p.yaml',
    definition: pipeline(agent('a')),
    input: 'do it',
    startAgent: 'a',
    cwd: '/tmp',
    maxStages: 20,
    timeouts: {},
    gate: { model: null, timeout: 120, system_prompt: '' },
    script: null,
    parentTaskId: null,
    kind: 'run',
  };

  describe(`${name} event store contract`, () => {
    let store: EventStore;
    afterEach(() => store?.close());

    it('creates a task with a fresh T-XXXXXX id and its first event', () => {
      store = open();
      const first = store.createTask(created);
      const second = store.createTask(created);
      expect(first.taskId).toMatch(/^T-[0-9A-F]{6}$/);
      expect(second.taskId).not.toBe(first.taskId);
      expect(store.task(first.taskId)).toMatchObject({
        id: first.taskId,
        status: 'pending',
        pipeline: 'p',
        input: 'do it',
      });
    });

    it('appends in order, with rising global sequence numbers (consecutive within an append), and reads back from any point', () => {
      store = open();
      const { taskId } = store.createTask(created);
      const stored = store.append(
        taskId,
        [
          { type: 'stage_started', stage: 1, activation: 'a1', agent: 'a', input: 'x', attempt: 1 },
          { type: 'stage_output', stage: 1, text: 'hel' },
        ],
        { status: 'running' },
      );
      expect(stored[1]!.seq).toBe(stored[0]!.seq + 1);
      expect([...store.events(taskId)].map((e) => e.type)).toEqual([
        'task_created',
        'stage_started',
        'stage_output',
      ]);
      expect([...store.events(taskId, stored[0]!.seq)].map((e) => e.type)).toEqual(['stage_output']);
      expect(store.task(taskId)).toMatchObject({ status: 'running', currentAgent: 'a' });
      expect(store.eventsSince(0, 100).filter((e) => e.taskId === taskId)).toHaveLength(3);
    });

    it('keeps a large append whole and in order (70 events, each read back as written)', () => {
      store = open();
      const { taskId } = store.createTask(created);
      const events = Array.from({ length: 70 }, (_, i) => ({
        type: 'stage_output' as const,
        stage: 1,
        text: `part ${i}`,
      }));
      const stored = store.append(taskId, events, { status: 'running' });
      expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => stored[0]!.seq + i));
      const read = [...store.events(taskId, stored[0]!.seq - 1)];
      expect(read.map((e) => [e.seq, e.type === 'stage_output' ? e.text : ''])).toEqual(
        events.map((e, i) => [stored[0]!.seq + i, e.text]),
      );
    });

    it('reads events of some types across tasks, optionally only from tasks that have another type', () => {
      store = open();
      const a = store.createTask(created).taskId;
      const b = store.createTask(created).taskId;
      const started = (stage: number) =>
        ({ type: 'stage_started', stage, activation: 'a1', agent: 'a', input: 'x', attempt: 1 }) as const;
      store.append(a, [started(1), { type: 'budget_warning', used: 8, limit: 10, unit: 'tokens' }], {
        status: 'running',
      });
      store.append(b, [started(1), started(2)], { status: 'running' });
      const all = [...store.eventsOfTypes(['stage_started'])].filter((e) => e.taskId === a || e.taskId === b);
      expect(all.map((e) => [e.taskId, e.type])).toEqual([
        [a, 'stage_started'],
        [b, 'stage_started'],
        [b, 'stage_started'],
      ]);
      const ofA = [...store.eventsOfTypes(['stage_started', 'budget_warning'], 'budget_warning')];
      expect(ofA.map((e) => [e.taskId, e.type])).toEqual([
        [a, 'stage_started'],
        [a, 'budget_warning'],
      ]);
    });

    it('writes nothing after a task has ended', () => {
      store = open();
      const { taskId } = store.createTask(created);
      store.append(taskId, [{ type: 'task_cancelled', reason: 'stop' }], { status: 'cancelled' });
      expect(() => store.append(taskId, [{ type: 'task_completed' }], { status: 'completed' })).toThrow(
        /cancelled/,
      );
      expect([...store.events(taskId)].map((e) => e.type)).toEqual(['task_created', 'task_cancelled']);
    });

    it('lists tasks newest first, filtered by status, paged', () => {
      store = open();
      const ids = [1, 2, 3].map(() => store.createTask(created).taskId);
      store.append(ids[1]!, [{ type: 'task_completed' }], { status: 'completed' });
      expect(store.tasks().map((t) => t.id)).toEqual([...ids].reverse());
      expect(store.tasks({ status: ['completed'] }).map((t) => t.id)).toEqual([ids[1]]);
      expect(store.tasks({ limit: 1, offset: 1 }).map((t) => t.id)).toEqual([ids[1]]);
    });

    it('leases a task to one live process at a time; a dead holder’s lease is free', () => {
      store = open();
      const { taskId } = store.createTask(created);
      const me = { pid: process.pid, host: 'this-host' };
      expect(store.tryLease(taskId, { pid: process.pid, host: hostname() })).toBe(true);
      expect(store.tryLease(taskId, { pid: 999_999_999, host: hostname() })).toBe(false);
      store.releaseLease(taskId, { pid: process.pid, host: hostname() });
      expect(store.leaseHolder(taskId)).toBeNull();
      expect(store.tryLease(taskId, { pid: 999_999_998, host: hostname() })).toBe(true);
      // that pid does not exist: the lease counts as free
      expect(store.leaseHolder(taskId)).toBeNull();
      expect(store.tryLease(taskId, me)).toBe(true);
    });
  });
}
