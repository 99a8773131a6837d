import { describe, expect, it } from 'vitest';
import { agent, handoff, IN_WORKTREES, Log, pipeline, WORKSPACE_READY } from '../test-pipelines.js';
import { checkoutsAhead } from './graph-plan.js';
import { nextSteps } from './plan.js';

/** A planner of three independent pieces, two at a time, each verified by `tester`. */
const planned = () => ({
  ...pipeline(
    agent('planner', {
      plan: {
        worker: 'builder',
        verifier: 'tester',
        max_rounds: 2,
        concurrency: 2,
        replans: 0,
        checks: 'verifier',
      },
      handoffs: [handoff('reviewer')],
    }),
    agent('builder'),
    agent('tester'),
    agent('reviewer'),
  ),
  workspace: IN_WORKTREES,
});

const piece = (id: string) => ({
  id,
  goal: `do ${id}`,
  paths: [`${id}/`],
  depends_on: [],
  size: null,
  labels: [],
  checks: [],
});

/** The task's worktree is ready and the planner's stage is running. */
function planning(): Log {
  return new Log(planned())
    .add(WORKSPACE_READY)
    .add({ type: 'stage_started', stage: 1, activation: 'a1', agent: 'planner', input: 'x', attempt: 1 });
}

/** The planner's stage ends and its plan of pieces (a, b and c) is expanded. */
function expand(log: Log, ids = ['a', 'b', 'c']): Log {
  return log.add(
    {
      type: 'stage_completed',
      stage: 1,
      activation: 'a1',
      agent: 'planner',
      output: 'plan',
      usage: { input_tokens: 1, output_tokens: 1 },
      durationMs: 1,
    },
    {
      type: 'plan_expanded',
      stage: 1,
      activation: 'a1',
      agent: 'planner',
      round: 1,
      pieces: ids.map(piece),
      warnings: [],
    },
  );
}

/** A piece's worktree is made (its lineage: l1 for the plan's first piece, …). */
const worktreeMade = (id: string, lineage: string) =>
  ({
    type: 'branch_workspace_ready',
    lineage,
    agent: `piece-${id}`,
    path: `/r/.troupe/worktrees/T-TEST--piece-${id}`,
    branch: `troupe/T-TEST--piece-${id}`,
    start: 'base',
  }) as const;

/** A piece's worker ran in its worktree and its verifier approved: it waits for its merge. */
function finish(log: Log, id: string, lineage: string, stage: number, activation: string): void {
  log.add(worktreeMade(id, lineage)).stage(stage, activation, 'builder', `${id} built`).add(
    {
      type: 'gate_decided',
      stage,
      agent: 'builder',
      decision: 'approved',
      reason: 'fine',
      by: 'llm',
    },
    { type: 'handoff', stage, activation, targets: [] },
  );
}

describe('a plan’s graph', () => {
  it('a ready piece starts before finished ones merge; those are merged in one step, in plan order', () => {
    const log = expand(planning()).add(
      { type: 'piece_started', piece: 'a', input: 'Piece: a\n' },
      { type: 'piece_started', piece: 'b', input: 'Piece: b\n' },
    );
    finish(log, 'b', 'l2', 3, 'a4');
    finish(log, 'a', 'l1', 2, 'a3');
    // c is ready and has a place: it starts first, beside the merge (it waits on nothing merging)
    expect(nextSteps(log.state)).toContainEqual({
      kind: 'start_piece',
      piece: 'c',
      input: expect.stringContaining('Piece: c\n'),
    });
    log.add({ type: 'piece_started', piece: 'c', input: 'Piece: c\n' });
    expect(nextSteps(log.state)).toContainEqual({
      kind: 'merge_branches',
      activation: 'a2',
      agent: 'planner',
      into: null,
      branches: ['troupe/T-TEST--piece-a', 'troupe/T-TEST--piece-b'],
      resolved: null,
      pieces: ['a', 'b'],
    });
  });

  it('a piece’s worker waits for its worktree; with every place taken the next pieces’ are made ahead (at most `concurrency`), and a made one starts first', () => {
    const log = expand(planning(), ['a', 'b', 'c', 'd', 'e', 'f']).add(
      { type: 'piece_started', piece: 'a', input: 'Piece: a\n' },
      { type: 'piece_started', piece: 'b', input: 'Piece: b\n' },
    );
    // a's and b's workers wait for their worktrees; c's is not made before theirs
    expect(nextSteps(log.state)).toEqual([
      { kind: 'prepare_piece', piece: 'a' },
      { kind: 'prepare_piece', piece: 'b' },
    ]);
    log.add(worktreeMade('a', 'l1'), worktreeMade('b', 'l2'));
    const steps = nextSteps(log.state);
    expect(steps.map((s) => s.kind)).toEqual(['prepare_piece', 'start_stage', 'start_stage']);
    expect(steps[0]).toEqual({ kind: 'prepare_piece', piece: 'c' });
    // checkouts: two for the pieces to start next, two for a's and b's verifiers
    expect(checkoutsAhead(log.state)).toBe(2 + 2);
    // d's worktree made before c's (a crash's leftover, say): one checkout fewer is wanted, and d
    // goes first once a place frees
    log.add(worktreeMade('d', 'l4'));
    expect(checkoutsAhead(log.state)).toBe(1 + 2);
    log
      .stage(2, 'a3', 'builder', 'a built')
      .add(
        { type: 'gate_decided', stage: 2, agent: 'builder', decision: 'approved', reason: 'fine', by: 'llm' },
        { type: 'handoff', stage: 2, activation: 'a3', targets: [] },
      );
    expect(nextSteps(log.state)[0]).toEqual({
      kind: 'start_piece',
      piece: 'd',
      input: expect.stringContaining('Piece: d\n'),
    });
    log.add(
      { type: 'piece_started', piece: 'd', input: 'Piece: d\n' },
      {
        type: 'branches_merged',
        activation: 'a2',
        into: null,
        branches: ['troupe/T-TEST--piece-a'],
        head: 'm1',
      },
    );
    const ahead = () => nextSteps(log.state).filter((s) => s.kind === 'prepare_piece');
    expect(ahead()).toEqual([{ kind: 'prepare_piece', piece: 'c' }]);
    log.add(worktreeMade('c', 'l3'));
    expect(ahead()).toEqual([{ kind: 'prepare_piece', piece: 'e' }]);
    // c's and e's made: two ahead, as many as the places; f's waits
    log.add(worktreeMade('e', 'l5'));
    expect(ahead()).toEqual([]);
  });

  it('wants checkouts made ahead: for the first pieces while the planner works, then for pieces to start and to verify', () => {
    const log = planning();
    expect(checkoutsAhead(log.state)).toBe(2);
    expand(log);
    // three to start (two at a time), none running yet
    expect(checkoutsAhead(log.state)).toBe(2);
    log.add(
      { type: 'piece_started', piece: 'a', input: 'Piece: a\n' },
      { type: 'piece_started', piece: 'b', input: 'Piece: b\n' },
    );
    // c to start; a and b to verify
    expect(checkoutsAhead(log.state)).toBe(3);
    finish(log, 'a', 'l1', 2, 'a3');
    finish(log, 'b', 'l2', 3, 'a4');
    log.add({ type: 'piece_started', piece: 'c', input: 'Piece: c\n' });
    // nothing left to start; c to verify
    expect(checkoutsAhead(log.state)).toBe(1);
  });

  it('wants none without a worktree', () => {
    const log = new Log(planned()).add({
      type: 'stage_started',
      stage: 1,
      activation: 'a1',
      agent: 'planner',
      input: 'x',
      attempt: 1,
    });
    expect(checkoutsAhead(log.state)).toBe(0);
  });
});
