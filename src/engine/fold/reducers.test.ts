import { describe, expect, it } from 'vitest';
import { type EventOf, isStopped, isTerminal, TASK_EVENT_TYPES } from '../../core/events.js';
import { wakeUps } from '../plan/wake-ups.js';
import { agent, Log, pipeline } from '../test-pipelines.js';
import { reducers } from './reducers.js';
import { applyEvent, mailboxWaits, waitingFor } from './task-state.js';
import type { Reducers } from './types.js';

describe('the fold', () => {
  it('has a reducer for every event type but task_created (which makes the state), and no other', () => {
    const types = new Set<string>(TASK_EVENT_TYPES);
    expect(types.size).toBeGreaterThan(40);
    types.delete('task_created');
    expect(new Set(Object.keys(reducers))).toEqual(types);
  });

  it('does not compile a table that misses an event type', () => {
    const { stage_output: _left, ...incomplete } = reducers;
    // @ts-expect-error stage_output has no reducer: a new event type without one fails the same way
    const table: Reducers = incomplete;
    expect(table).not.toHaveProperty('stage_output');
  });

  it('derives the status after each event, except one that ends the task', () => {
    const log = new Log(pipeline(agent('a')));
    log.add({ type: 'task_failed', reason: 'boom', stage: null, errorKind: null });
    expect(log.state.status).toBe('failed');
    log.add({ type: 'task_resumed', pid: 1 });
    expect(log.state.status).toBe('running');
    expect(log.state.failure?.reason).toBe('boom');
  });
});

it('a running stage holds the output streamed so far; its completion brings the whole', () => {
  const log = new Log(pipeline(agent('a'))).add(
    { type: 'stage_started', stage: 1, activation: 'a1', agent: 'a', input: 'x', attempt: 1 },
    { type: 'stage_output', stage: 1, text: 'one\n' },
    { type: 'stage_output', stage: 1, text: 'two\n' },
  );
  expect(log.state.stages[0]!.output).toBe('one\ntwo\n');
  log.add({
    type: 'stage_completed',
    stage: 1,
    activation: 'a1',
    agent: 'a',
    output: 'one\ntwo\nthree\n',
    usage: { input_tokens: 1, output_tokens: 1 },
    durationMs: 1,
  });
  log.add({ type: 'stage_output', stage: 1, text: 'late' });
  expect(log.state.stages[0]!.output).toBe('one\ntwo\nthree\n');
});

describe('a failed stage', () => {
  const failed = (extra: Partial<EventOf<'stage_attempt_failed'>> = {}): EventOf<'stage_attempt_failed'> => ({
    type: 'stage_attempt_failed',
    stage: 1,
    activation: 'a1',
    agent: 'a',
    attempt: 1,
    error: { kind: 'auth', message: 'not logged in', hint: 'log in' },
    partialOutput: '',
    ...extra,
  });
  const started = () =>
    new Log(pipeline(agent('a'))).add({
      type: 'stage_started',
      stage: 1,
      activation: 'a1',
      agent: 'a',
      input: 'x',
      attempt: 1,
    });

  it('lasts what the failure recorded', () => {
    const log = started().add(failed({ durationMs: 44_100 }));
    expect(log.state.stages[0]!.durationMs).toBe(44_100);
  });

  it('in a log from before durations were recorded, lasts from its start to its failure', () => {
    const log = started();
    const state = applyEvent(log.state, {
      ...failed(),
      seq: 9,
      taskId: 'T-TEST',
      at: '2026-01-01T00:00:45.500Z',
    });
    expect(state.stages[0]!.durationMs).toBe(44_500); // Log's stage_started is at 00:00:01
  });

  it("gives the task that failed at it the error's hint; a task's own hint wins", () => {
    const log = started().add(failed());
    log.add({ type: 'task_failed', reason: 'agent a failed', stage: 1, errorKind: 'auth' });
    expect(log.state.failure?.hint).toBe('log in');
    const own = new Log(pipeline(agent('a'))).add({
      type: 'task_failed',
      reason: 'no commits',
      stage: null,
      errorKind: 'workspace',
      hint: 'commit first',
    });
    expect(own.state.failure?.hint).toBe('commit first');
  });
});

it("a task's usage totals what its stages read from the cache", () => {
  const log = new Log(pipeline(agent('a')));
  for (const [n, cached] of [
    [1, 700],
    [2, 0],
  ] as const) {
    log.add(
      { type: 'stage_started', stage: n, activation: 'a1', agent: 'a', input: '', attempt: 1 },
      {
        type: 'stage_completed',
        stage: n,
        activation: 'a1',
        agent: 'a',
        output: 'ok',
        usage: { input_tokens: 10, output_tokens: 5, ...(cached ? { cache_read_tokens: cached } : {}) },
        durationMs: 1,
      },
    );
  }
  expect(log.state.usage).toEqual({ input_tokens: 20, output_tokens: 10, cache_read_tokens: 700 });
});

describe('a cancel', () => {
  const start = (n: number, activation: string, agentId: string): EventOf<'stage_started'> => ({
    type: 'stage_started',
    stage: n,
    activation,
    agent: agentId,
    input: 'x',
    attempt: 1,
  });

  it('ends the stages in flight at its time and drops every wait: a question, a mailbox, a rate limit', () => {
    const targets = ['b', 'c', 'd', 'e'];
    const log = new Log(pipeline(agent('a'), ...targets.map((id) => agent(id))));
    log.stage(1, 'a1', 'a', 'plan');
    log.add({
      type: 'handoff',
      stage: 1,
      activation: 'a1',
      targets: targets.map((id) => ({ agent: id, input: 'go', condition: '' })),
    });
    log.add(
      {
        type: 'human_input_requested',
        activation: 'a2',
        agent: 'b',
        stage: null,
        mode: 'before',
        questions: ['why?'],
      },
      start(2, 'a3', 'c'),
      {
        type: 'mailbox_asked',
        stage: 2,
        activation: 'a3',
        agent: 'c',
        handle: 'codex',
        thread: 't',
        deadline: null,
      },
      start(3, 'a4', 'd'),
      {
        type: 'rate_limited',
        stage: 3,
        activation: 'a4',
        agent: 'd',
        provider: 'claude',
        resetAt: '2026-01-01T01:00:00.000Z',
        message: '429',
      },
      start(4, 'a5', 'e'),
    );
    expect([waitingFor(log.state), mailboxWaits(log.state)]).not.toEqual([null, []]);

    const state = applyEvent(log.state, {
      type: 'task_cancelled',
      reason: 'enough',
      seq: 99,
      taskId: 'T-TEST',
      at: '2026-01-01T00:00:31.000Z',
    });
    expect([state.status, state.cancelReason, state.cancelledAt]).toEqual([
      'cancelled',
      'enough',
      '2026-01-01T00:00:31.000Z',
    ]);
    expect(waitingFor(state)).toBeNull();
    expect(mailboxWaits(state)).toEqual([]);
    const open = [...state.activations.values()].filter(
      (a) => a.status === 'running' || a.status === 'awaiting_human' || a.waitingFor || a.pendingQuestion,
    );
    expect(open).toEqual([]);
    expect(state.stages.map((s) => s.status)).toEqual(['completed', 'cancelled', 'interrupted', 'cancelled']);
    expect(state.stages[3]).toMatchObject({ finishedAt: '2026-01-01T00:00:31.000Z', durationMs: 30_000 });
  });
});

describe('a parked task', () => {
  const started = {
    type: 'stage_started',
    stage: 1,
    activation: 'a1',
    agent: 'a',
    input: 'x',
    attempt: 1,
  } as const;
  const parked = { type: 'task_parked', reason: 'refused append', failures: 4 } as const;

  it('is parked, whatever else is recorded, until a person resumes it; its cut-off stage shows so', () => {
    const log = new Log(pipeline(agent('a'))).add(started, parked);
    expect(log.state.status).toBe('parked');
    expect(log.state.parked).toMatchObject({ reason: 'refused append', failures: 4 });
    expect(log.state.parked?.at).toBe(log.state.updatedAt);
    expect(log.state.stages[0]!.status).toBe('interrupted');
    expect(isStopped(log.state.status)).toBe(true);
    expect(isTerminal(log.state.status)).toBe(false);
    expect(wakeUps(log.state)).toEqual([]);
    // a run that was in flight when it was parked records what it did: still parked
    log.add({ type: 'stage_output', stage: 1, text: 'late' });
    expect(log.state.status).toBe('parked');

    log.add({ type: 'task_resumed', pid: 1 });
    expect(log.state.status).toBe('running');
    expect(log.state.parked).toBeNull();
    expect(wakeUps(log.state)).not.toEqual([]);
  });

  it('can be cancelled', () => {
    const log = new Log(pipeline(agent('a'))).add(started, parked, { type: 'task_cancelled', reason: 'no' });
    expect(log.state.status).toBe('cancelled');
  });
});
