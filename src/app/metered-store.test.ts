import { describe, expect, it } from 'vitest';
import { currentHolder } from '../core/event-store.js';
import { TASK_CREATED } from '../engine/test-pipelines.js';
import { openMemoryStore } from '../store/memory-store.js';
import { meteredStore } from './metered-store.js';

describe('meteredStore', () => {
  it('counts the stages ended here and the tasks taken from a holder that never handed them back', () => {
    const counted = { stageRun: 0, takeover: 0, leaseLost: 0, wakeFailed: 0 };
    const store = meteredStore(openMemoryStore(), {
      stageRun: () => counted.stageRun++,
      takeover: () => counted.takeover++,
      leaseLost: () => counted.leaseLost++,
      wakeFailed: () => counted.wakeFailed++,
    });
    const { taskId } = store.createTask(TASK_CREATED);
    const me = currentHolder();
    // a holder on this machine whose process is gone (a kill -9), its lease still recorded
    expect(store.tryLease(taskId, { ...me, pid: 4_194_303 })).toBe(true);
    expect(store.tryLease(taskId, me)).toBe(true);
    expect(counted.takeover).toBe(1);
    // taken again after a clean hand-back: no takeover
    store.releaseLease(taskId, me);
    expect(store.tryLease(taskId, me)).toBe(true);
    store.append(
      taskId,
      [
        { type: 'stage_started', stage: 1, activation: 'a1', agent: 'a', input: 'x', attempt: 1 },
        {
          type: 'stage_completed',
          stage: 1,
          activation: 'a1',
          agent: 'a',
          output: 'done',
          usage: { input_tokens: 0, output_tokens: 0 },
          durationMs: 1,
        },
      ],
      { status: 'running' },
    );
    expect(counted).toEqual({ stageRun: 1, takeover: 1, leaseLost: 0, wakeFailed: 0 });
    expect(store.task(taskId)?.status).toBe('running');
  });
});
