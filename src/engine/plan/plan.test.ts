import { describe, expect, it } from 'vitest';
import type { RuntimeErrorKind } from '../../core/runtime.js';
import { agent, handoff, Log, pipeline, session, WORKSPACE_READY } from '../test-pipelines.js';
import { nextSteps, type Step } from './plan.js';

const kinds = (steps: Step[]) => steps.map((s) => s.kind);
const only = (log: Log) => {
  const steps = nextSteps(log.state);
  expect(steps).toHaveLength(1);
  return steps[0]!;
};

describe('planner: linear handoffs', () => {
  const p = pipeline(agent('a', { handoffs: [handoff('b')] }), agent('b'));

  it('starts the first agent on the task input as stage 1', () => {
    expect(only(new Log(p))).toMatchObject({
      kind: 'start_stage',
      agent: 'a',
      stage: 1,
      attempt: 1,
      input: 'build it',
    });
  });

  it('plans nothing while a stage runs', () => {
    const log = new Log(p).add({
      type: 'stage_started',
      stage: 1,
      activation: 'a1',
      agent: 'a',
      input: 'x',
      attempt: 1,
    });
    expect(nextSteps(log.state)).toEqual([]);
  });

  it('hands off with the rendered payload, then starts the target', () => {
    const log = new Log(p).stage(1, 'a1', 'a', 'plan v1');
    const step = only(log);
    expect(step).toMatchObject({
      kind: 'handoff',
      stage: 1,
      targets: [{ agent: 'b', input: 'plan v1', condition: 'always' }],
    });
    log.add({
      type: 'handoff',
      stage: 1,
      activation: 'a1',
      targets: (step as Extract<Step, { kind: 'handoff' }>).targets,
    });
    expect(only(log)).toMatchObject({ kind: 'start_stage', agent: 'b', stage: 2, input: 'plan v1' });
  });

  it('completes the task when no activation is open', () => {
    const log = new Log(p)
      .stage(1, 'a1', 'a', 'x')
      .add({
        type: 'handoff',
        stage: 1,
        activation: 'a1',
        targets: [{ agent: 'b', input: 'x', condition: 'always' }],
      })
      .stage(2, 'a2', 'b', 'y')
      .add({ type: 'handoff', stage: 2, activation: 'a2', targets: [] });
    expect(kinds(nextSteps(log.state))).toEqual(['complete']);
  });

  it('plans nothing for an ended task', () => {
    const log = new Log(p).add({ type: 'task_cancelled', reason: 'stop' });
    expect(nextSteps(log.state)).toEqual([]);
  });

  it('fails the task past max_stages', () => {
    const loop = pipeline(agent('a', { handoffs: [handoff('a')] }));
    const log = new Log(loop, 'go', 1).stage(1, 'a1', 'a', 'x').add({
      type: 'handoff',
      stage: 1,
      activation: 'a1',
      targets: [{ agent: 'a', input: 'x', condition: 'always' }],
    });
    expect(only(log)).toMatchObject({ kind: 'fail', reason: 'Exceeded maximum number of stages (1).' });
  });

  it('stops an agent that produces the same output three times in a row', () => {
    const loop = pipeline(agent('a', { handoffs: [handoff('a')] }));
    const log = new Log(loop);
    for (const n of [1, 2]) {
      log.stage(n, `a${n}`, 'a', 'same').add({
        type: 'handoff',
        stage: n,
        activation: `a${n}`,
        targets: [{ agent: 'a', input: 'same', condition: 'always' }],
      });
    }
    log.stage(3, 'a3', 'a', 'same');
    expect(only(log)).toMatchObject({ kind: 'fail', errorKind: 'runaway', stage: 3 });
  });

  it('stops before the stage that would go past the budget', () => {
    const p = {
      ...pipeline(agent('a', { handoffs: [handoff('b')] }), agent('b')),
      budget: { tokens: 3, usd: null },
    };
    const log = new Log(p).stage(1, 'a1', 'a', 'x'); // 2 tokens so far; one more stage like it makes 4
    log.add({
      type: 'handoff',
      stage: 1,
      activation: 'a1',
      targets: [{ agent: 'b', input: 'x', condition: 'always' }],
    });
    expect(only(log)).toMatchObject({ kind: 'fail', errorKind: 'budget' });
    const roomy = new Log({ ...p, budget: { tokens: 10, usd: null } }).stage(1, 'a1', 'a', 'x');
    roomy.add({
      type: 'handoff',
      stage: 1,
      activation: 'a1',
      targets: [{ agent: 'b', input: 'x', condition: 'always' }],
    });
    expect(only(roomy)).toMatchObject({ kind: 'start_stage', agent: 'b' });
  });

  it('warns once at 80 % of the budget', () => {
    const p = {
      ...pipeline(agent('a', { handoffs: [handoff('b')] }), agent('b')),
      budget: { tokens: 2, usd: null },
    };
    const log = new Log(p).stage(1, 'a1', 'a', 'x'); // 2 of 2 tokens
    expect(only(log)).toEqual({ kind: 'budget_warning', used: 2, limit: 2, unit: 'tokens' });
    log.add({ type: 'budget_warning', used: 2, limit: 2, unit: 'tokens' });
    expect(nextSteps(log.state).map((s) => s.kind)).not.toContain('budget_warning');
  });

  it('fails with a clear reason when a payload template is broken', () => {
    const broken = pipeline(agent('a', { handoffs: [handoff('b', 'always', '{{ nope.x }}')] }), agent('b'));
    expect(only(new Log(broken).stage(1, 'a1', 'a', 'x'))).toMatchObject({
      kind: 'fail',
      errorKind: 'template_error',
    });
  });
});

describe('planner: entry_point auto', () => {
  it('asks the router first, then starts the agent it named', () => {
    const p = pipeline(agent('a'), agent('b'));
    const log = new Log(p, 'x', 20, null);
    expect(nextSteps(log.state)).toEqual([{ kind: 'route_entry' }]);
    log.add({ type: 'entry_routed', agent: 'b', fallback: false, answer: 'b' });
    expect(only(log)).toMatchObject({ kind: 'start_stage', agent: 'b', stage: 1, input: 'x' });
  });
});

describe('planner: conditions', () => {
  it('routes on a named field of the output, not on a word in it', () => {
    const p = pipeline(
      agent('triage', {
        handoffs: [handoff('fire', 'severity == critical'), handoff('backlog', 'severity != critical')],
      }),
      agent('fire'),
      agent('backlog'),
    );
    const calm = only(new Log(p).stage(1, 'a1', 'triage', 'severity: low\nThis is NOT critical.'));
    expect(calm).toMatchObject({ kind: 'handoff', targets: [{ agent: 'backlog' }] });
    const hot = only(new Log(p).stage(1, 'a1', 'triage', '{"severity": "critical"}'));
    expect(hot).toMatchObject({ kind: 'handoff', targets: [{ agent: 'fire' }] });
  });

  it('compares numbers numerically', () => {
    const p = pipeline(agent('judge', { handoffs: [handoff('ship', 'score >= 8')] }), agent('ship'));
    expect(only(new Log(p).stage(1, 'a1', 'judge', 'score: 10'))).toMatchObject({
      targets: [{ agent: 'ship' }],
    });
    expect(only(new Log(p).stage(1, 'a1', 'judge', 'score: 7'))).toMatchObject({ targets: [] });
  });

  it('auto: goes where the agent says with HANDOFF:, within the allowed targets', () => {
    const p = pipeline(
      agent('router', { handoffs: [handoff('*', 'auto')] }),
      agent('billing'),
      agent('tech'),
    );
    const step = only(new Log(p).stage(1, 'a1', 'router', 'Looks like a bug.\nHANDOFF: tech, nobody'));
    expect(step).toMatchObject({ kind: 'handoff', targets: [{ agent: 'tech' }] });
  });

  it('every matching rule contributes targets, each once', () => {
    const p = pipeline(agent('a', { handoffs: [handoff('b'), handoff('b, c')] }), agent('b'), agent('c'));
    const step = only(new Log(p).stage(1, 'a1', 'a', 'x')) as Extract<Step, { kind: 'handoff' }>;
    expect(step.targets.map((t) => t.agent)).toEqual(['b', 'c']);
  });
});

describe('planner: gates', () => {
  const gate = (type: 'llm' | 'human' | 'command', max_retries = 2) => ({
    type,
    prompt: '',
    model: null,
    max_retries,
    command: type === 'command' ? 'true' : null,
    timeout: null,
  });
  const reviewed = (g = gate('llm')) =>
    pipeline(
      agent('dev', { handoffs: [handoff('rev')] }),
      agent('rev', { gate: g, handoffs: [handoff('ship', 'on_approve'), handoff('dev', 'on_reject')] }),
      agent('ship'),
    );
  const atReview = (p = reviewed()) =>
    new Log(p)
      .stage(1, 'a1', 'dev', 'v1')
      .add({
        type: 'handoff',
        stage: 1,
        activation: 'a1',
        targets: [{ agent: 'rev', input: 'v1', condition: 'always' }],
      })
      .stage(2, 'a2', 'rev', 'review');

  it('evaluates an llm or command gate before any handoff', () => {
    expect(only(atReview())).toEqual({ kind: 'evaluate_gate', stage: 2, agent: 'rev', gate: 'llm' });
    expect(only(atReview(reviewed(gate('command'))))).toMatchObject({
      kind: 'evaluate_gate',
      gate: 'command',
    });
  });

  it('a human gate waits: once it is waiting, nothing more is planned', () => {
    const log = atReview(reviewed(gate('human')));
    expect(only(log)).toEqual({ kind: 'await_gate', stage: 2, agent: 'rev' });
    log.add({ type: 'gate_waiting', stage: 2, agent: 'rev' });
    expect(log.state.status).toBe('awaiting_gate');
    expect(nextSteps(log.state)).toEqual([]);
  });

  it('on_approve and on_reject follow the decision, with reject_reason in the payload', () => {
    const approved = atReview().add({
      type: 'gate_decided',
      stage: 2,
      agent: 'rev',
      decision: 'approved',
      reason: '',
      by: 'llm',
    });
    expect(only(approved)).toMatchObject({ targets: [{ agent: 'ship' }] });
    const rejected = atReview().add({
      type: 'gate_decided',
      stage: 2,
      agent: 'rev',
      decision: 'rejected',
      reason: 'no tests',
      by: 'llm',
    });
    expect(only(rejected)).toMatchObject({ targets: [{ agent: 'dev', condition: 'on_reject' }] });
  });

  it('a rejection with no on_reject handoff sends the work back to the same agent with the reason', () => {
    const p = pipeline(agent('w', { gate: gate('llm'), handoffs: [handoff('next')] }), agent('next'));
    const log = new Log(p).stage(1, 'a1', 'w', 'draft').add({
      type: 'gate_decided',
      stage: 1,
      agent: 'w',
      decision: 'rejected',
      reason: 'too short',
      by: 'llm',
    });
    const step = only(log) as Extract<Step, { kind: 'handoff' }>;
    expect(step.targets).toHaveLength(1);
    expect(step.targets[0]).toMatchObject({ agent: 'w', condition: 'gate_retry' });
    expect(step.targets[0]!.input).toContain('too short');
  });

  it('counts every rejection by the gate in the task, so A→B→A loops end too', () => {
    const log = atReview(reviewed(gate('llm', 1)));
    log.add({ type: 'gate_decided', stage: 2, agent: 'rev', decision: 'rejected', reason: 'r1', by: 'llm' });
    expect(only(log).kind).toBe('handoff');
    log
      .add({
        type: 'handoff',
        stage: 2,
        activation: 'a2',
        targets: [{ agent: 'dev', input: 'r1', condition: 'on_reject' }],
      })
      .stage(3, 'a3', 'dev', 'v2')
      .add({
        type: 'handoff',
        stage: 3,
        activation: 'a3',
        targets: [{ agent: 'rev', input: 'v2', condition: 'always' }],
      })
      .stage(4, 'a4', 'rev', 'review 2')
      .add({ type: 'gate_decided', stage: 4, agent: 'rev', decision: 'rejected', reason: 'r2', by: 'llm' });
    expect(only(log)).toMatchObject({ kind: 'fail', errorKind: 'gate_rejected', stage: 4 });
    expect((only(log) as Extract<Step, { kind: 'fail' }>).reason).toContain(
      "Agent 'rev' exceeded max gate retries (1)",
    );
  });

  it('does not count a person’s rejections against max_retries', () => {
    const log = atReview(reviewed(gate('human', 0))).add({
      type: 'gate_decided',
      stage: 2,
      agent: 'rev',
      decision: 'rejected',
      reason: 'not yet',
      by: 'human',
    });
    expect(only(log)).toMatchObject({ kind: 'handoff', targets: [{ agent: 'dev' }] });
  });
});

describe('planner: human input', () => {
  it('before: asks first (the configured prompt), then runs with the answer appended', () => {
    const p = pipeline(
      agent('dev', { human_input: { enabled: true, mode: 'before', prompt: 'Constraints?' } }),
    );
    const log = new Log(p);
    expect(only(log)).toMatchObject({
      kind: 'ask_human',
      mode: 'before',
      questions: ['Constraints?'],
      stage: null,
    });
    log.add({
      type: 'human_input_requested',
      activation: 'a1',
      agent: 'dev',
      stage: null,
      mode: 'before',
      questions: ['Constraints?'],
    });
    expect(log.state.status).toBe('awaiting_human_input');
    expect(nextSteps(log.state)).toEqual([]);
    log.add({ type: 'human_input_given', activation: 'a1', answer: 'no new deps', by: 'human' });
    expect(only(log)).toMatchObject({
      kind: 'start_stage',
      input: 'build it\n\n--- User Input ---\nno new deps',
    });
  });

  it('on_demand: a HUMAN_INPUT: question pauses before the gate; the answer re-runs the agent with it', () => {
    const p = pipeline(agent('dev', { human_input: { enabled: true, mode: 'on_demand', prompt: '' } }));
    const log = new Log(p).stage(1, 'a1', 'dev', 'HUMAN_INPUT: Which database?');
    expect(only(log)).toMatchObject({
      kind: 'ask_human',
      mode: 'on_demand',
      stage: 1,
      questions: ['Which database?'],
    });
    log
      .add({
        type: 'human_input_requested',
        activation: 'a1',
        agent: 'dev',
        stage: 1,
        mode: 'on_demand',
        questions: ['Which database?'],
      })
      .add({ type: 'human_input_given', activation: 'a1', answer: 'Postgres', by: 'human' });
    const step = only(log) as Extract<Step, { kind: 'start_stage' }>;
    expect(step).toMatchObject({ kind: 'start_stage', agent: 'dev', stage: 2 });
    expect(step.input).toContain('--- User Response ---\nPostgres');
    expect(step.input).toContain("Continue based on the user's response.");
  });
});

describe('planner: runtime retry and recovery', () => {
  /** Attempts 1..n of agent a's stage 1, each failed with `kind` (the executor's backoff recorded with each). */
  const failing = (
    retry: { max_retries: number; backoff: number } | null,
    kind: RuntimeErrorKind = 'overloaded',
    attempts = 1,
  ) => {
    const p = pipeline(agent('a', { retry: retry && { ...retry, fallback_context_strategy: null } }));
    const log = new Log(p);
    for (let attempt = 1; attempt <= attempts; attempt++) {
      log.add(
        { type: 'stage_started', stage: 1, activation: 'a1', agent: 'a', input: 'x', attempt },
        {
          type: 'stage_attempt_failed',
          stage: 1,
          activation: 'a1',
          agent: 'a',
          attempt,
          error: { kind, message: 'boom' },
          partialOutput: '',
          retryAt: '2026-01-01T00:00:06.000Z',
        },
      );
    }
    return log;
  };

  it('retries the same stage after the backoff while retries remain', () => {
    expect(only(failing({ max_retries: 1, backoff: 5 }))).toMatchObject({
      kind: 'start_stage',
      stage: 1,
      attempt: 2,
      notBefore: '2026-01-01T00:00:06.000Z',
    });
  });

  it.each(['overloaded', 'network', 'timeout'] as const)(
    'retries %s by default, twice, then fails the task with the kind',
    (kind) => {
      expect(only(failing(null, kind, 1))).toMatchObject({ kind: 'start_stage', attempt: 2 });
      expect(only(failing(null, kind, 2))).toMatchObject({ kind: 'start_stage', attempt: 3 });
      expect(only(failing(null, kind, 3))).toMatchObject({
        kind: 'fail',
        reason: "agent 'a' failed after 3 attempts: boom",
        errorKind: kind,
      });
    },
  );

  it.each(['auth', 'quota_billing', 'context_overflow', 'script_missing', 'cancelled'] as const)(
    'never retries %s, whatever retry: says',
    (kind) => {
      for (const retry of [null, { max_retries: 3, backoff: 0 }]) {
        expect(only(failing(retry, kind))).toMatchObject({
          kind: 'fail',
          reason: "agent 'a' failed: boom",
          errorKind: kind,
        });
      }
    },
  );

  it('retries a crash only under retry:, as aqm retries any failed call', () => {
    expect(only(failing(null, 'crashed'))).toMatchObject({ kind: 'fail', errorKind: 'crashed' });
    expect(only(failing({ max_retries: 1, backoff: 0 }, 'crashed'))).toMatchObject({
      kind: 'start_stage',
      attempt: 2,
    });
  });

  it('max_retries: 0 turns retries off', () => {
    expect(only(failing({ max_retries: 0, backoff: 1 }, 'timeout'))).toMatchObject({
      kind: 'fail',
      errorKind: 'timeout',
    });
  });

  it('runs a stage whose session was lost again at once (without it), even with max_retries: 0', () => {
    expect(only(failing({ max_retries: 0, backoff: 1 }, 'session_not_found'))).toMatchObject({
      kind: 'start_stage',
      attempt: 2,
    });
    expect(only(failing({ max_retries: 0, backoff: 1 }, 'session_not_found', 2))).toMatchObject({
      kind: 'fail',
    });
  });

  it('a rate-limited stage waits for the reset under the same number, and the limit is not a failed attempt', () => {
    const p = pipeline(agent('a', { retry: null }));
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
    expect(log.state.status).toBe('waiting');
    expect(only(log)).toMatchObject({
      kind: 'start_stage',
      stage: 1,
      attempt: 1,
      notBefore: '2026-01-01T03:00:00.000Z',
    });
  });

  it('runs an interrupted stage again under the same number, without using up a retry', () => {
    const p = pipeline(agent('a'), agent('b'));
    const log = new Log(p).add(
      { type: 'stage_started', stage: 1, activation: 'a1', agent: 'a', input: 'x', attempt: 1 },
      { type: 'stage_interrupted', stage: 1, activation: 'a1' },
    );
    expect(only(log)).toMatchObject({ kind: 'start_stage', stage: 1, attempt: 1 });
  });
});

describe('planner: fan-out and join', () => {
  const p = pipeline(
    agent('lead', { handoffs: [handoff('sec, perf')] }),
    agent('sec', { handoffs: [handoff('sum')] }),
    agent('perf', { handoffs: [handoff('sum')] }),
    agent('sum'),
  );
  const fanned = () =>
    new Log(p).stage(1, 'a1', 'lead', 'code').add({
      type: 'handoff',
      stage: 1,
      activation: 'a1',
      targets: [
        { agent: 'sec', input: 'code', condition: 'always' },
        { agent: 'perf', input: 'code', condition: 'always' },
      ],
    });

  it('starts every branch at once, each with its own stage', () => {
    const steps = nextSteps(fanned().state);
    expect(
      steps.map((s) => [s.kind, (s as { agent: string }).agent, (s as { stage: number }).stage]),
    ).toEqual([
      ['start_stage', 'sec', 2],
      ['start_stage', 'perf', 3],
    ]);
  });

  it('a branch that reaches the join waits for the others, then one activation gets all branches', () => {
    const log = fanned()
      .stage(2, 'a2', 'sec', 'no issues')
      .add({
        type: 'handoff',
        stage: 2,
        activation: 'a2',
        targets: [{ agent: 'sum', input: 'no issues', condition: 'always' }],
      })
      .add({ type: 'stage_started', stage: 3, activation: 'a3', agent: 'perf', input: 'code', attempt: 1 });
    expect(nextSteps(log.state)).toEqual([]);
    log.add({
      type: 'stage_completed',
      stage: 3,
      activation: 'a3',
      agent: 'perf',
      output: 'one slow query',
      usage: { input_tokens: 0, output_tokens: 0 },
      durationMs: 1,
    });
    log.add({
      type: 'handoff',
      stage: 3,
      activation: 'a3',
      targets: [{ agent: 'sum', input: 'one slow query', condition: 'always' }],
    });
    const join = only(log);
    expect(join).toEqual({ kind: 'join', agent: 'sum', activations: ['a4', 'a5'] });
    log.add({ type: 'join', agent: 'sum', activations: ['a4', 'a5'] });
    const start = only(log) as Extract<Step, { kind: 'start_stage' }>;
    expect(start).toMatchObject({ kind: 'start_stage', agent: 'sum', stage: 4 });
    const merged = log.state.activations.get(start.activation)!;
    expect(merged.branches.map((b) => [b.agent, b.output])).toEqual([
      ['sec', 'no issues'],
      ['perf', 'one slow query'],
    ]);
    expect(merged.group).toBeNull();
  });

  it('a branch that ends without handing off does not hold the join', () => {
    const log = fanned()
      .stage(2, 'a2', 'sec', 'ok')
      .add({
        type: 'handoff',
        stage: 2,
        activation: 'a2',
        targets: [{ agent: 'sum', input: 'ok', condition: 'always' }],
      })
      .stage(3, 'a3', 'perf', 'nothing')
      .add({ type: 'handoff', stage: 3, activation: 'a3', targets: [] });
    expect(only(log)).toMatchObject({ kind: 'start_stage', agent: 'sum' });
  });
});

describe('planner: fan-out whose join can send the work back to the agent that fanned out', () => {
  // a reviewer's on_reject to the planner: through it, each branch "can reach" the other
  const p = pipeline(
    agent('architect', { handoffs: [handoff('frontend, backend')] }),
    agent('frontend', { handoffs: [handoff('reviewer')] }),
    agent('backend', { handoffs: [handoff('reviewer')] }),
    agent('reviewer', { handoffs: [handoff('architect', 'on_reject')] }),
  );
  const frontendRunning = () =>
    new Log(p).stage(1, 'a1', 'architect', 'plan').add(
      {
        type: 'handoff',
        stage: 1,
        activation: 'a1',
        targets: [
          { agent: 'frontend', input: 'plan', condition: 'always' },
          { agent: 'backend', input: 'plan', condition: 'always' },
        ],
      },
      { type: 'stage_started', stage: 2, activation: 'a2', agent: 'frontend', input: 'plan', attempt: 1 },
    );

  it('starts the other branch while the first one runs', () => {
    expect(only(frontendRunning())).toMatchObject({ kind: 'start_stage', agent: 'backend', stage: 3 });
  });

  it('the join still waits for the branch that is running', () => {
    const log = frontendRunning()
      .add({ type: 'stage_started', stage: 3, activation: 'a3', agent: 'backend', input: 'plan', attempt: 1 })
      .add({
        type: 'stage_completed',
        stage: 2,
        activation: 'a2',
        agent: 'frontend',
        output: 'form',
        usage: { input_tokens: 1, output_tokens: 1 },
        durationMs: 1,
      })
      .add({
        type: 'handoff',
        stage: 2,
        activation: 'a2',
        targets: [{ agent: 'reviewer', input: 'form', condition: 'always' }],
      });
    expect(nextSteps(log.state)).toEqual([]);
    log
      .add({
        type: 'stage_completed',
        stage: 3,
        activation: 'a3',
        agent: 'backend',
        output: 'api',
        usage: { input_tokens: 1, output_tokens: 1 },
        durationMs: 1,
      })
      .add({
        type: 'handoff',
        stage: 3,
        activation: 'a3',
        targets: [{ agent: 'reviewer', input: 'api', condition: 'always' }],
      });
    expect(only(log)).toEqual({ kind: 'join', agent: 'reviewer', activations: ['a4', 'a5'] });
  });
});

describe('planner: sessions', () => {
  const p = (extra = {}) =>
    pipeline(
      session('talk', ['x', 'y'], { max_rounds: 2, handoffs: [handoff('dev')], ...extra }),
      agent('x'),
      agent('y'),
      agent('dev'),
    );
  const turn = (log: Log, n: number, who: string, output: string, round: number, summary = false) =>
    log.add(
      {
        type: 'stage_started',
        stage: n,
        activation: 'a1',
        agent: who,
        input: 'topic',
        attempt: 1,
        turn: { round, summary },
      },
      {
        type: 'stage_completed',
        stage: n,
        activation: 'a1',
        agent: who,
        output,
        usage: { input_tokens: 0, output_tokens: 0 },
        durationMs: 1,
      },
    );
  const started = (pp = p()) => {
    const log = new Log(pp, 'topic');
    expect(only(log)).toMatchObject({ kind: 'start_session', participants: ['x', 'y'] });
    return log.add({
      type: 'session_started',
      activation: 'a1',
      session: 'talk',
      participants: ['x', 'y'],
      topic: 'topic',
    });
  };

  it('gives each participant a turn in order, then ends the round', () => {
    const log = started();
    expect(only(log)).toMatchObject({
      kind: 'start_stage',
      agent: 'x',
      stage: 1,
      turn: { round: 1, summary: false },
    });
    turn(log, 1, 'x', 'VOTE: AGREE', 1);
    expect(only(log)).toMatchObject({ kind: 'start_stage', agent: 'y', stage: 2 });
    turn(log, 2, 'y', 'not yet', 1);
    expect(only(log)).toEqual({
      kind: 'end_round',
      activation: 'a1',
      round: 1,
      agreed: ['x'],
      consensus: false,
    });
  });

  it('the latest turn is what counts: a vote can be withdrawn', () => {
    const log = started();
    turn(log, 1, 'x', 'VOTE: AGREE', 1);
    turn(log, 2, 'y', 'not yet', 1);
    log.add({ type: 'session_round_ended', activation: 'a1', round: 1, agreed: ['x'], consensus: false });
    turn(log, 3, 'x', 'on reflection, no', 2);
    turn(log, 4, 'y', 'VOTE: AGREE', 2);
    expect(only(log)).toMatchObject({ kind: 'end_round', round: 2, agreed: ['y'], consensus: false });
  });

  it('majority means more than half', () => {
    const log = started(
      p({
        consensus: {
          method: 'vote',
          keyword: 'VOTE: AGREE',
          require: 'majority',
          require_chunks_done: false,
        },
      }),
    );
    turn(log, 1, 'x', 'VOTE: AGREE', 1);
    turn(log, 2, 'y', 'no', 1);
    expect(only(log)).toMatchObject({ kind: 'end_round', consensus: false });
  });

  it('on consensus the summary agent speaks once more and its words are the session output', () => {
    const log = started(p({ summary_agent: 'x' }));
    turn(log, 1, 'x', 'VOTE: AGREE', 1);
    turn(log, 2, 'y', 'vote: agree', 1);
    log.add({ type: 'session_round_ended', activation: 'a1', round: 1, agreed: ['x', 'y'], consensus: true });
    expect(only(log)).toMatchObject({
      kind: 'start_stage',
      agent: 'x',
      stage: 3,
      turn: { round: 1, summary: true },
    });
    turn(log, 3, 'x', 'We go with JWT.', 1, true);
    expect(only(log)).toEqual({
      kind: 'end_session',
      activation: 'a1',
      session: 'talk',
      stage: 4,
      outcome: 'consensus',
      rounds: 1,
      output: 'We go with JWT.',
    });
    log.add({
      type: 'session_ended',
      activation: 'a1',
      session: 'talk',
      stage: 4,
      outcome: 'consensus',
      rounds: 1,
      output: 'We go with JWT.',
    });
    expect(only(log)).toMatchObject({
      kind: 'handoff',
      stage: 4,
      targets: [{ agent: 'dev', input: 'We go with JWT.' }],
    });
    expect(log.state.transcript).toContain('We go with JWT.');
  });

  it('no consensus after max_rounds fails the task unless a handoff routes on_no_consensus', () => {
    const run = (pp: ReturnType<typeof p>) => {
      const log = started(pp);
      turn(log, 1, 'x', 'no', 1);
      turn(log, 2, 'y', 'no', 1);
      log.add({ type: 'session_round_ended', activation: 'a1', round: 1, agreed: [], consensus: false });
      turn(log, 3, 'x', 'no', 2);
      turn(log, 4, 'y', 'no', 2);
      log.add({ type: 'session_round_ended', activation: 'a1', round: 2, agreed: [], consensus: false });
      expect(only(log)).toMatchObject({ kind: 'end_session', outcome: 'no_consensus', rounds: 2 });
      return log.add({
        type: 'session_ended',
        activation: 'a1',
        session: 'talk',
        stage: 5,
        outcome: 'no_consensus',
        rounds: 2,
        output: 'no',
      });
    };
    expect(only(run(p()))).toMatchObject({ kind: 'fail', errorKind: 'no_consensus' });
    const routed = run(p({ handoffs: [handoff('dev'), handoff('x', 'on_no_consensus')] }));
    expect(only(routed)).toMatchObject({ kind: 'handoff', targets: [{ agent: 'x' }] });
  });
});

describe('planner: spec and output_schema rejections', () => {
  const reject = (stage: number) =>
    ({
      type: 'output_rejected',
      stage,
      agent: 'a',
      check: 'spec',
      reason: 'requirements must NOT have fewer than 1 items',
    }) as const;

  it('sends the stage back to the same agent with the errors, even when on_reject goes elsewhere', () => {
    const p = pipeline(
      agent('a', { handoffs: [handoff('b'), handoff('fixer', 'on_reject')] }),
      agent('b'),
      agent('fixer'),
    );
    const log = new Log(p).stage(1, 'a1', 'a', '{"requirements": []}', 'build it').add(reject(1));
    expect(log.state.gateRejections).toEqual({ a: 1 });
    expect(log.state.gateCalls).toEqual({});
    const step = only(log);
    expect(step).toMatchObject({ kind: 'handoff', targets: [{ agent: 'a', condition: 'gate_retry' }] });
    const target = (step as Extract<Step, { kind: 'handoff' }>).targets[0]!;
    expect(target.input).toContain('--- Gate Rejection ---\nrequirements must NOT have fewer than 1 items');
  });

  it('fails the task past max_retries (3 without a gate) with a reason that says why', () => {
    const p = pipeline(agent('a'));
    const log = new Log(p);
    for (let n = 1; n <= 4; n++) {
      log.stage(n, `a${n}`, 'a', `attempt ${n}`).add(reject(n));
      const step = only(log);
      if (n <= 3) {
        expect(step.kind).toBe('handoff');
        log.add({
          type: 'handoff',
          stage: n,
          activation: `a${n}`,
          targets: (step as Extract<Step, { kind: 'handoff' }>).targets,
        });
      } else {
        expect(step).toMatchObject({ kind: 'fail', errorKind: 'gate_rejected', stage: 4 });
        expect((step as Extract<Step, { kind: 'fail' }>).reason).toContain(
          "Agent 'a' exceeded max gate retries (3). Its spec kept failing validation",
        );
      }
    }
  });

  it('skips the agent’s own gate for a stage its check rejected', () => {
    const gate = {
      type: 'llm' as const,
      prompt: '',
      model: null,
      max_retries: 1,
      command: null,
      timeout: null,
    };
    const log = new Log(pipeline(agent('a', { gate }))).stage(1, 'a1', 'a', 'x').add(reject(1));
    expect(only(log)).toMatchObject({ kind: 'handoff' });
  });
});

describe('planner: fan-out branches in worktrees', () => {
  const p = pipeline(
    agent('lead', { handoffs: [handoff('sec, perf')] }),
    agent('sec', { handoffs: [handoff('sum')] }),
    agent('perf', { handoffs: [handoff('sum')] }),
    agent('sum', { on_conflict: 'fixer' }),
    agent('fixer'),
  );
  const ws = (lineage: string, agentId: string) => ({
    type: 'branch_workspace_ready' as const,
    lineage,
    agent: agentId,
    path: `/r/.troupe/worktrees/T-TEST--${agentId}`,
    branch: `troupe/T-TEST--${agentId}`,
    start: 'base',
  });
  const toSum = (stage: number, activation: string) => ({
    type: 'handoff' as const,
    stage,
    activation,
    targets: [{ agent: 'sum', input: 'x', condition: 'always' }],
  });
  /** Both branches ran in their worktrees and reached the join. */
  /** `lead` fanned out to sec and perf, each in its branch worktree. */
  const fannedOut = (of: typeof p) =>
    new Log(of)
      .add(WORKSPACE_READY)
      .stage(1, 'a1', 'lead', 'code')
      .add({
        type: 'handoff',
        stage: 1,
        activation: 'a1',
        targets: [
          { agent: 'sec', input: 'code', condition: 'always' },
          { agent: 'perf', input: 'code', condition: 'always' },
        ],
      })
      .add(ws('l1', 'sec'), ws('l2', 'perf'));
  const joined = () =>
    fannedOut(p)
      .stage(2, 'a2', 'sec', 'ok')
      .add(toSum(2, 'a2'))
      .stage(3, 'a3', 'perf', 'ok')
      .add(toSum(3, 'a3'), { type: 'join', agent: 'sum', activations: ['a4', 'a5'] });

  it('merges the branches into the task worktree before the join runs', () => {
    const log = joined();
    expect(only(log)).toEqual({
      kind: 'merge_branches',
      activation: 'a6',
      agent: 'sum',
      into: null,
      branches: ['troupe/T-TEST--sec', 'troupe/T-TEST--perf'],
      resolved: null,
    });
    log.add({
      type: 'branches_merged',
      activation: 'a6',
      into: null,
      branches: ['troupe/T-TEST--sec', 'troupe/T-TEST--perf'],
      head: 'm2',
    });
    expect(only(log)).toMatchObject({ kind: 'start_stage', agent: 'sum', stage: 4 });
    expect(log.state.workspace?.head).toBe('m2');
  });

  it('a conflict runs the on_conflict agent first, then the join merges the rest and runs', () => {
    const log = joined().add({
      type: 'branch_conflict',
      activation: 'a6',
      into: null,
      branch: 'troupe/T-TEST--perf',
      files: ['app.ts'],
      merged: ['troupe/T-TEST--sec'],
      head: 'm1',
      resolver: 'fixer',
    });
    const fix = only(log) as Extract<Step, { kind: 'start_stage' }>;
    expect(fix).toMatchObject({ kind: 'start_stage', agent: 'fixer', stage: 4 });
    expect(fix.input).toContain('troupe/T-TEST--perf');
    expect(fix.input).toContain('- app.ts');
    log.stage(4, fix.activation, 'fixer', 'combined');
    expect(only(log)).toEqual({
      kind: 'conflict_handled',
      activation: 'a6',
      resolver: fix.activation,
      stage: 4,
    });
    log.add({ type: 'conflict_handled', activation: 'a6', resolver: fix.activation, stage: 4 });
    expect(only(log)).toMatchObject({
      kind: 'merge_branches',
      branches: [],
      resolved: 'troupe/T-TEST--perf',
    });
    log.add({
      type: 'branches_merged',
      activation: 'a6',
      into: null,
      branches: [],
      resolved: 'troupe/T-TEST--perf',
      head: 'm3',
    });
    expect(only(log)).toMatchObject({ kind: 'start_stage', agent: 'sum', stage: 5 });
    // nothing is left for the end: sec merged, perf resolved by hand
    log.stage(5, 'a6', 'sum', 'done').add({ type: 'handoff', stage: 5, activation: 'a6', targets: [] });
    expect(only(log)).toEqual({ kind: 'complete' });
  });

  it('without on_conflict the join waits for a person; the answer lets it merge the rest', () => {
    const q = pipeline(...p.agents.map((a) => (a.id === 'sum' ? agent('sum') : a)));
    const log = joined();
    log.state.definition = q;
    log.add(
      {
        type: 'branch_conflict',
        activation: 'a6',
        into: null,
        branch: 'troupe/T-TEST--perf',
        files: ['app.ts'],
        merged: ['troupe/T-TEST--sec'],
        head: 'm1',
        resolver: null,
      },
      {
        type: 'human_input_requested',
        activation: 'a6',
        agent: 'sum',
        stage: null,
        mode: 'merge_conflict',
        questions: ['app.ts conflicts'],
      },
    );
    expect(log.state.status).toBe('awaiting_human_input');
    expect(nextSteps(log.state)).toEqual([]);
    log.add({ type: 'human_input_given', activation: 'a6', answer: 'merged it', by: 'human' });
    expect(only(log)).toMatchObject({
      kind: 'merge_branches',
      resolved: 'troupe/T-TEST--perf',
      branches: [],
    });
  });

  it('branches no join collected are merged before the task completes', () => {
    const ends = pipeline(agent('lead', { handoffs: [handoff('sec, perf')] }), agent('sec'), agent('perf'));
    const log = fannedOut(ends)
      .stage(2, 'a2', 'sec', 'ok')
      .add({ type: 'handoff', stage: 2, activation: 'a2', targets: [] })
      .stage(3, 'a3', 'perf', 'ok')
      .add({ type: 'handoff', stage: 3, activation: 'a3', targets: [] });
    expect(only(log)).toMatchObject({
      kind: 'merge_branches',
      activation: null,
      branches: ['troupe/T-TEST--sec', 'troupe/T-TEST--perf'],
    });
    log.add({
      type: 'branches_merged',
      activation: null,
      into: null,
      branches: ['troupe/T-TEST--sec', 'troupe/T-TEST--perf'],
      head: 'm',
    });
    expect(only(log)).toEqual({ kind: 'complete' });
  });
});
