import { describe, expect, it } from 'vitest';
import { RuntimeError } from '../core/runtime.js';
import type { WakeHandler, WorkQueue } from '../store/queue/work-queue.js';
import type { WorkerRegistry } from '../store/queue/worker-registry.js';
import type { Project } from './project.js';
import { Worker } from './worker.js';

/** A queue that hands the test its handlers and remembers what was sent. */
function handQueue() {
  const handlers: WakeHandler[] = [];
  const queue: WorkQueue = {
    enqueue: async () => {},
    work: (_options, handler) => void handlers.push(handler),
    pause: () => {},
    stop: async () => {},
    deadLetters: async () => [],
    revive: async () => false,
    countFailure: async () => ({ failures: 1, parked: null }),
    parkedTask: async () => null,
    parked: async () => [],
    close: async () => {},
  };
  return { queue, handlers };
}

const registry = { seen: async () => {}, remove: async () => {} } as unknown as WorkerRegistry;

function scriptedWorker(project: Project, queue: WorkQueue, lines: string[]): Worker {
  return new Worker(project, queue, registry, {
    id: 'w1',
    runtimes: ['scripted'],
    labels: [],
    concurrency: 1,
    checkSeconds: 60,
    graceSeconds: 1,
    log: (line) => lines.push(line),
    version: '0.0.0-test',
  });
}

describe('Worker', () => {
  it('says a run stopped by a lease taken over was lost to its new holder, not cancelled', async () => {
    let leaseLost: (taskId: string) => void = () => {};
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const project = {
      store: {
        task: () => ({ status: 'running' }),
        onLeaseLost: (listener: (taskId: string) => void) => {
          leaseLost = listener;
          return () => {};
        },
        leaseHolder: () => ({ pid: 4242, host: 'other-host' }),
      },
      tasks: {
        // as the executor does: the stop aborts the stage, which ends as "task cancelled"
        continue: (_id: string, _observer: unknown, stop: AbortSignal) =>
          new Promise((_resolve, reject) => {
            started();
            stop.addEventListener('abort', () => reject(new RuntimeError('cancelled', 'task cancelled')));
          }),
        state: () => ({ id: 'T-AAAAAA' }),
      },
    } as unknown as Project;
    const { queue, handlers } = handQueue();
    const lines: string[] = [];
    const worker = scriptedWorker(project, queue, lines);
    await worker.start();
    const job = handlers[0]!({ id: 'j1', taskId: 'T-AAAAAA', lane: 'scripted', retries: 0 });
    await running;
    leaseLost('T-AAAAAA');
    await job;
    await worker.drain();
    expect(lines).toContain('T-AAAAAA: lease lost to process 4242 on other-host — stopped');
    expect(lines.join('\n')).not.toMatch(/cancelled/);
  });

  it("fails a wake-up for a task its project's store does not have, saying so, rather than dropping it", async () => {
    const project = {
      root: '/elsewhere',
      config: {},
      store: { task: () => undefined, leaseHolder: () => null },
      tasks: {},
    } as unknown as Project;
    const { queue, handlers } = handQueue();
    const lines: string[] = [];
    const worker = scriptedWorker(project, queue, lines);
    await worker.start();
    const said = "T-BBBBBB: not in this project's store (/elsewhere/.troupe/troupe.db); left for its owner";
    await expect(
      handlers[0]!({ id: 'j1', taskId: 'T-BBBBBB', lane: 'scripted', retries: 0 }),
    ).rejects.toThrow(said);
    await worker.drain();
    expect(lines).toEqual([said]);
  });

  it('counts a failed run against the task: below the limit the job fails (retried), at it the task is parked and the job ends', async () => {
    const parkedCalls: unknown[] = [];
    let runs = 0;
    const project = {
      store: { task: () => ({ status: 'running' }), leaseHolder: () => null },
      tasks: {
        continue: async () => {
          runs++;
          throw new Error('refused append');
        },
        park: (...args: unknown[]) => parkedCalls.push(args),
      },
    } as unknown as Project;
    const { queue, handlers } = handQueue();
    let failures = 0;
    queue.countFailure = async (taskId, reason) => {
      failures++;
      return { failures, parked: failures > 1 ? { taskId, reason, failures, at: 'now' } : null };
    };
    const lines: string[] = [];
    const worker = scriptedWorker(project, queue, lines);
    await worker.start();
    const wake = () => handlers[0]!({ id: 'j1', taskId: 'T-CCCCCC', lane: 'scripted', retries: 0 });
    await expect(wake()).rejects.toThrow('refused append');
    await expect(wake()).resolves.toBeUndefined();
    expect(parkedCalls).toEqual([['T-CCCCCC', 'refused append', 2]]);
    expect(lines).toContain('T-CCCCCC: parked after 2 failed runs (`troupe resume T-CCCCCC` runs it again)');

    // parked: wake-ups and checks alike leave it, though its log could not say so
    queue.parkedTask = async (taskId) => ({ taskId, reason: 'refused append', failures: 2, at: 'now' });
    const sent: unknown[] = [];
    queue.enqueue = async (wake) => void sent.push(wake);
    await wake();
    await handlers[1]!({ id: 'j2', taskId: 'T-CCCCCC', lane: 'check', retries: 0 });
    await worker.drain();
    expect(runs).toBe(2);
    expect(sent).toEqual([]);
  });
});
