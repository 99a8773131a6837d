import { describe, expect, it } from 'vitest';
import { planView } from '../../app/plan-view.js';
import { memoryWorld } from '../../app/test-doubles.js';
import type { StoredEvent } from '../../core/events.js';
import type { PlanSettings } from '../../core/pipeline.js';
import type { Script } from '../../core/script.js';
import { defaultConfig } from '../../pipeline/config.js';
import { agent, handoff, IN_WORKTREES, pipeline } from '../test-pipelines.js';

/**
 * Plans as task graphs on the in-memory world: what the engine decides for a plan's pieces,
 * read back from the events. test/task-graph.test.ts runs the same in real git repositories.
 */

const planned = (settings: Partial<PlanSettings>, extra = {}) => {
  const p = pipeline(
    agent('planner', {
      plan: {
        worker: 'builder',
        verifier: 'tester',
        max_rounds: 2,
        concurrency: 1,
        replans: 0,
        checks: 'verifier',
        ...settings,
      },
      handoffs: [handoff('reviewer')],
    }),
    agent('builder', extra),
    agent('tester'),
    agent('reviewer'),
  );
  return { ...p, workspace: IN_WORKTREES };
};

const plan = (...pieces: object[]) => JSON.stringify({ pieces });

function types(events: StoredEvent[], ...wanted: string[]) {
  return events.filter((e) => wanted.includes(e.type));
}

describe('a plan in memory', () => {
  it("a verifier's rejection sends only that piece back to its worker", async () => {
    const world = memoryWorld({ repo: '/repo' });
    const script: Script = {
      agents: {
        planner: [plan({ id: 'a', goal: 'do a', paths: ['a/'] }, { id: 'b', goal: 'do b', paths: ['b/'] })],
        builder: [
          { when: 'Piece: a\\n', reply: 'a built' },
          { when: 'Piece: b\\n', reply: 'b built' },
        ],
        reviewer: ['fine'],
      },
      gates: { builder: [{ decision: 'rejected', reason: 'a misses its test' }, 'approved'] },
      human: {},
    };
    const id = world.service.start({ pipeline: planned({}), input: 'build', script });
    const done = await world.service.continue(id);
    expect(done.status, done.failure?.reason).toBe('completed');
    const builds = done.stages.filter((s) => s.agent === 'builder');
    expect(builds.map((s) => s.output)).toEqual(['a built', 'a built', 'b built']);
    expect(builds[1]!.input).toContain('--- Gate Rejection ---\na misses its test');
    // the verifier judged each commit in a fresh checkout: never the worker's directory
    expect(world.workspace.calls.filter((c) => c.startsWith('verify'))).toHaveLength(3);
    expect(world.workspace.calls.filter((c) => c.startsWith('branch'))).toEqual([
      'branch piece-a',
      'branch piece-b',
    ]);
  });

  it('pieces whose worktrees are ready in another order than planned number their stages as they start: the log has no gaps', async () => {
    const world = memoryWorld({ repo: '/repo' });
    world.workspace.branchDelayMs['piece-a'] = 150;
    const pieces = ['a', 'b', 'c'].map((id) => ({ id, goal: `do ${id}`, paths: [`${id}/`] }));
    const script: Script = {
      agents: {
        planner: [plan(...pieces)],
        builder: pieces.map((p) => ({ when: `Piece: ${p.id}\\n`, reply: `${p.id} built` })),
        reviewer: ['fine'],
      },
      gates: { builder: ['approved'] },
      human: {},
    };
    const id = world.service.start({ pipeline: planned({ concurrency: 3 }), input: 'build', script });
    const done = await world.service.continue(id);
    expect(done.status, done.failure?.reason).toBe('completed');
    // each new stage is the next number when it is recorded, whatever order it was planned in
    const started = types([...world.store.events(id)], 'stage_started').map(
      (e) => (e as { stage: number }).stage,
    );
    expect(started).toEqual(started.map((_, i) => i + 1));
    const builds = done.stages.filter((s) => s.agent === 'builder').map((s) => s.output);
    expect(builds.at(-1)).toBe('a built');
  });

  it('a piece is routed by its own size and labels, and the decision says so', async () => {
    const config = defaultConfig();
    config.routing = {
      tiers: {
        fast: { runtime: null, model: 'small', effort: null },
        deep: { runtime: null, model: 'large', effort: null },
      },
      router: null,
      default: 'deep',
      rules: [
        { tier: 'fast', size: ['S'], agents: null, labels: null, keywords: null },
        { tier: 'deep', size: null, agents: null, labels: ['risky'], keywords: null },
      ],
      learn: { enabled: false, min_samples: 3, prefer_approval: 0.8, avoid_rejection: 0.5, explore: false },
    };
    const world = memoryWorld({ repo: '/repo', config });
    const script: Script = {
      agents: {
        planner: [
          plan(
            { id: 'small', goal: 'a typo', paths: ['a'], size: 'S' },
            { id: 'risky', goal: 'the auth', paths: ['b'], labels: ['risky'] },
          ),
        ],
        builder: ['built'],
        reviewer: ['fine'],
      },
      gates: { builder: ['approved'] },
      human: {},
    };
    const id = world.service.start({ pipeline: planned({}, { model: 'auto' }), input: 'build', script });
    const done = await world.service.continue(id);
    expect(done.status, done.failure?.reason).toBe('completed');
    const routes = types([...world.store.events(id)], 'decision').map((e) =>
      e.type === 'decision' && e.kind === 'route' ? [e.tier, e.taskKind] : null,
    );
    expect(routes).toEqual([
      ['fast', 'test/builder@S'],
      ['deep', 'test/builder@-'],
    ]);
  });

  it('a plan whose pieces never validate fails the planner after max_rounds', async () => {
    const world = memoryWorld({ repo: '/repo' });
    const script: Script = { agents: { planner: ['no plan here'] }, gates: {}, human: {} };
    const id = world.service.start({ pipeline: planned({ max_rounds: 1 }), input: 'build', script });
    const done = await world.service.continue(id);
    expect(done.status).toBe('failed');
    expect(done.failure?.reason).toMatch(
      /exceeded max gate retries \(1\)\. Its plan kept failing validation/,
    );
    expect(done.stages.filter((s) => s.agent === 'planner')).toHaveLength(2);
  });

  it('a human gate on the planner: a person approves the plan before any piece starts', async () => {
    const world = memoryWorld({ repo: '/repo' });
    const gated = planned({});
    const planner = gated.agents[0]!;
    if (planner.type === 'agent')
      planner.gate = { type: 'human', prompt: '', model: null, max_retries: 1, command: null, timeout: null };
    const script: Script = {
      agents: {
        planner: [plan({ id: 'a', goal: 'do a', paths: ['a/'] })],
        builder: ['built'],
        reviewer: ['fine'],
      },
      gates: { builder: ['approved'] },
      human: {},
    };
    const id = world.service.start({ pipeline: gated, input: 'build', script });
    const waiting = await world.service.continue(id);
    expect(waiting.status).toBe('awaiting_gate');
    expect(waiting.plan).toBeNull();
    world.service.decideGate(id, 'approved', 'the plan is right', { channel: 'cli', who: 'ann' });
    const done = await world.service.continue(id);
    expect(done.status, done.failure?.reason).toBe('completed');
    expect(types([...world.store.events(id)], 'gate_decided', 'plan_expanded').map((e) => e.type)).toEqual([
      'gate_decided',
      'plan_expanded',
      'gate_decided',
    ]);
  });

  it('a worker that hands off within its piece is verified once its chain ends, and a rejection goes back to the worker', async () => {
    const world = memoryWorld({ repo: '/repo' });
    const p = planned({}, { handoffs: [handoff('documenter')] });
    p.agents.push(agent('documenter'));
    const script: Script = {
      agents: {
        planner: [plan({ id: 'a', goal: 'do a', paths: ['a/'] })],
        builder: ['built once', 'built again'],
        documenter: ['documented once', 'documented again'],
        reviewer: ['fine'],
      },
      gates: { documenter: [{ decision: 'rejected', reason: 'no tests' }, 'approved'] },
      human: {},
    };
    const id = world.service.start({ pipeline: p, input: 'build', script });
    const done = await world.service.continue(id);
    expect(done.status, done.failure?.reason).toBe('completed');
    const chain = done.stages.filter((s) => s.agent === 'builder' || s.agent === 'documenter');
    expect(chain.map((s) => [s.agent, s.gate?.decision ?? null])).toEqual([
      ['builder', null],
      ['documenter', 'rejected'],
      ['builder', null],
      ['documenter', 'approved'],
    ]);
    expect(chain[2]!.input).toContain('Piece: a\n');
    expect(chain[2]!.input).toContain('--- Gate Rejection ---\nno tests');
    expect(world.workspace.calls.filter((c) => c.startsWith('verify'))).toHaveLength(2);
  });
});

describe('a sub-pipeline runs each piece', () => {
  const subPiped = (retries = {}) => {
    const p = planned({ ...retries });
    const planner = p.agents[0]!;
    if (planner.type === 'agent' && planner.plan) {
      planner.plan = {
        ...planner.plan,
        worker: 'coder',
        pipeline: {
          name: 'build-doc',
          file: '/repo/.troupe/pipelines/build-doc.yaml',
          agents: ['coder', 'writer'],
        },
      };
    }
    p.agents.push(agent('coder', { handoffs: [handoff('writer')] }), agent('writer'));
    return p;
  };

  it('both of its agents run per piece, in order, and the piece is verified once, after the second', async () => {
    const world = memoryWorld({ repo: '/repo' });
    const script: Script = {
      agents: {
        planner: [
          plan(
            { id: 'a', goal: 'do a', paths: ['a/'] },
            { id: 'b', goal: 'do b', paths: ['b/'], depends_on: ['a'] },
          ),
        ],
        coder: [
          { when: 'Piece: a\n', reply: 'a coded' },
          { when: 'Piece: b\n', reply: 'b coded' },
        ],
        writer: [
          { when: 'a coded', reply: 'a written' },
          { when: 'b coded', reply: 'b written' },
        ],
        reviewer: ['fine'],
      },
      gates: { writer: ['approved'] },
      human: {},
    };
    const id = world.service.start({ pipeline: subPiped(), input: 'build', script });
    const done = await world.service.continue(id);
    expect(done.status, done.failure?.reason).toBe('completed');
    const pieceStages = done.stages.filter((s) => s.agent === 'coder' || s.agent === 'writer');
    expect(pieceStages.map((s) => [s.agent, s.output, s.gate?.decision ?? null])).toEqual([
      ['coder', 'a coded', null],
      ['writer', 'a written', 'approved'],
      ['coder', 'b coded', null],
      ['writer', 'b written', 'approved'],
    ]);
    const gates = types([...world.store.events(id)], 'gate_decided');
    expect(gates.map((e) => (e as { agent: string }).agent)).toEqual(['writer', 'writer']);
    expect(world.workspace.calls.filter((c) => c.startsWith('verify'))).toHaveLength(2);
    const view = planView(done)!;
    expect([view.worker, view.pipeline]).toEqual(['coder', 'build-doc']);
    // the verdict shown is the one on the piece's last stage
    expect(
      view.pieces.map((p) => [p.id, p.verdict?.decision, done.stages[p.verdict!.stage - 1]!.agent]),
    ).toEqual([
      ['a', 'approved', 'writer'],
      ['b', 'approved', 'writer'],
    ]);
  });

  it("a rejection sends the piece back to its first agent with the reason; the verifier's rejections end the piece after 3", async () => {
    const world = memoryWorld({ repo: '/repo' });
    const script: Script = {
      agents: {
        planner: [plan({ id: 'a', goal: 'do a', paths: ['a/'] })],
        coder: ['coded 1', 'coded 2', 'coded 3', 'coded 4'],
        writer: ['written 1', 'written 2', 'written 3', 'written 4'],
        reviewer: ['fine'],
      },
      gates: { writer: [{ decision: 'rejected', reason: 'the docs lie' }] },
      human: {},
    };
    const id = world.service.start({ pipeline: subPiped(), input: 'build', script });
    const done = await world.service.continue(id);
    expect(done.status).toBe('failed');
    const coders = done.stages.filter((s) => s.agent === 'coder');
    // the first run and three retries; each retry starts at the sub-pipeline's first agent
    expect(coders).toHaveLength(4);
    expect(coders[1]!.input).toContain('--- Gate Rejection ---\nthe docs lie');
    expect(coders[1]!.input).toContain("--- Previous Output (writer, the piece's last stage) ---\nwritten 1");
    expect(done.stages.filter((s) => s.agent === 'writer')).toHaveLength(4);
    expect(done.failure?.reason).toMatch(/piece a \(Agent 'writer' exceeded max gate retries \(3\)/);
  });

  it('a task resumed in the middle of a piece goes on with its next agent: no finished stage runs again', async () => {
    const world = memoryWorld({ repo: '/repo' });
    const script: Script = {
      agents: {
        planner: [plan({ id: 'a', goal: 'do a', paths: ['a/'] })],
        coder: ['coded'],
        writer: ['written'],
        reviewer: ['fine'],
      },
      gates: { writer: ['approved'] },
      human: {},
    };
    const id = world.service.start({ pipeline: subPiped(), input: 'build', script });
    // stopped as a kill would stop it, once the piece's first stage is recorded
    const stop = new AbortController();
    const stopAtCoder = (e: StoredEvent) => {
      if (e.type === 'stage_completed' && e.agent === 'coder') stop.abort();
    };
    const halted = await world.service
      .continue(id, { onEvent: stopAtCoder }, stop.signal)
      .catch(() => world.service.state(id));
    expect(halted.status).not.toBe('completed');
    expect(halted.stages.filter((s) => s.agent === 'coder' && s.status === 'completed')).toHaveLength(1);
    const done = await world.service.continue(id);
    expect(done.status, done.failure?.reason).toBe('completed');
    const started = types([...world.store.events(id)], 'stage_started').map(
      (e) => (e as { agent: string }).agent,
    );
    expect(started.filter((a) => a === 'coder')).toEqual(['coder']);
    expect(done.stages.filter((s) => s.agent === 'writer' && s.status === 'completed')).toHaveLength(1);
    expect(done.stages.find((s) => s.agent === 'writer' && s.status === 'completed')?.gate?.decision).toBe(
      'approved',
    );
  });
});
