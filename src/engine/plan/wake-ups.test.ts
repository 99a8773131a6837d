import { describe, expect, it } from 'vitest';
import { agent, handoff, Log, pipeline } from '../test-pipelines.js';
import { wakeUps } from './wake-ups.js';

describe('wake-ups: what a task nobody runs needs from the queue', () => {
  it("a new task needs its first agent's runtime, now", () => {
    const p = pipeline(agent('a', { runtime: 'codex', handoffs: [handoff('b')] }), agent('b'));
    expect(wakeUps(new Log(p).state)).toEqual([{ runtime: 'codex', labels: [], at: null }]);
  });

  it('a step of an agent with worker_labels needs a worker with them', () => {
    const p = pipeline(agent('a', { runtime: 'codex', worker_labels: ['eu-west', 'gpu'] }));
    expect(wakeUps(new Log(p).state)).toEqual([{ runtime: 'codex', labels: ['eu-west', 'gpu'], at: null }]);
  });

  it("an llm gate with a verifier needs the verifier's runtime and labels: it judges on them", () => {
    const p = pipeline(
      agent('dev', {
        runtime: 'codex',
        gate: {
          type: 'llm',
          prompt: '',
          model: null,
          max_retries: 1,
          command: null,
          timeout: null,
          verifier: 'qa',
        },
      }),
      agent('qa', { runtime: 'gemini', worker_labels: ['gpu'] }),
    );
    const log = new Log(p).stage(1, 'a1', 'dev', 'done');
    expect(wakeUps(log.state)).toEqual([{ runtime: 'gemini', labels: ['gpu'], at: null }]);
  });

  it("a fan-out needs each branch's runtime", () => {
    const p = pipeline(
      agent('lead', { handoffs: [handoff('left, right')] }),
      agent('left'),
      agent('right', { runtime: 'codex' }),
    );
    const log = new Log(p).stage(1, 'a1', 'lead', 'split').add({
      type: 'handoff',
      stage: 1,
      activation: 'a1',
      targets: [
        { agent: 'left', input: 'l', condition: 'always' },
        { agent: 'right', input: 'r', condition: 'always' },
      ],
    });
    expect(wakeUps(log.state)).toEqual([
      { runtime: 'claude', labels: [], at: null },
      { runtime: 'codex', labels: [], at: null },
    ]);
  });

  it("a limited stage needs its runtime at the provider's reset", () => {
    const p = pipeline(agent('a'));
    const log = new Log(p).add(
      { type: 'stage_started', stage: 1, activation: 'a1', agent: 'a', input: 'x', attempt: 1 },
      {
        type: 'rate_limited',
        stage: 1,
        activation: 'a1',
        agent: 'a',
        provider: 'claude',
        resetAt: '2026-01-01T03:00:00.000Z',
        message: 'usage limit',
      },
    );
    expect(wakeUps(log.state)).toEqual([{ runtime: 'claude', labels: [], at: '2026-01-01T03:00:00.000Z' }]);
  });

  it('a stage its last holder left running runs again, at once', () => {
    const p = pipeline(agent('a', { runtime: 'gemini' }));
    const log = new Log(p).add({
      type: 'stage_started',
      stage: 1,
      activation: 'a1',
      agent: 'a',
      input: 'x',
      attempt: 1,
    });
    expect(wakeUps(log.state)).toEqual([{ runtime: 'gemini', labels: [], at: null }]);
  });

  it('an ended task needs nothing', () => {
    const p = pipeline(agent('a'));
    const log = new Log(p).stage(1, 'a1', 'a', 'done').add({ type: 'task_completed' });
    expect(wakeUps(log.state)).toEqual([]);
  });
});
