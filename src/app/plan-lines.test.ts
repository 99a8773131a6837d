import { describe, expect, it } from 'vitest';
import { planLines } from './plan-lines.js';
import type { PieceView, PlanView } from './plan-view.js';

function piece(id: string, fields: Partial<PieceView> = {}): PieceView {
  return {
    id,
    goal: `the ${id}`,
    status: 'waiting',
    depends_on: [],
    level: 0,
    paths: [],
    size: null,
    labels: [],
    round: 1,
    stages: [],
    verdict: null,
    tier: null,
    branch: null,
    worktree: null,
    diff: null,
    usage: { input_tokens: 0, output_tokens: 0 },
    outside: [],
    failure: null,
    ...fields,
  };
}

function plan(pieces: PieceView[], warnings: string[] = []): PlanView {
  return {
    round: 2,
    planner: 'lead',
    worker: 'dev',
    pipeline: null,
    verifier: 'qa',
    replans: 1,
    warnings,
    pieces,
  };
}

describe('planLines', () => {
  it('prints nothing without a plan', () => {
    expect(planLines(null)).toEqual([]);
  });

  it('puts a long id on a line of its own and keeps every line within 80 columns', () => {
    const long = 'a-rather-long-piece-identifier';
    const lines = planLines(
      plan([
        piece('db', { status: 'merged', stages: [2], diff: { files: 2, insertions: 10, deletions: 3 } }),
        piece(long, {
          status: 'running',
          level: 1,
          depends_on: ['db', 'another-dependency', 'and-a-third-one'],
          stages: [3, 4],
          verdict: {
            decision: 'rejected',
            by: 'llm',
            reason: 'no tests for the parser yet; add them before merging',
            stage: 3,
          },
          tier: { tier: 'deep', runtime: 'claude', model: 'opus', effort: null },
          usage: { input_tokens: 1500, output_tokens: 700, cost_usd: 0.25 },
          branch: `troupe/T-ABCDEF--piece-${long}`,
        }),
      ]),
    );
    expect(lines[0]).toBe('  plan: round 2 by lead, 2 pieces (1 merged, 1 running)');
    expect(lines[1]).toBe('    db              merged · dev [2] · 0 tok · 2 files +10 -3');
    expect(lines[2]).toBe(`    ${long}`);
    expect(lines.slice(3).join('\n')).toBe(
      [
        '                    running · after db, another-dependency, and-a-third-one',
        '                    dev [3,4]',
        '                    rejected by qa (no tests for the parser yet; add them b…)',
        '                    tier deep (opus) · 2.2k tok $0.2500',
        `                    troupe/T-ABCDEF--piece-${long}`,
      ].join('\n'),
    );
    expect(lines.filter((l) => l.length > 80)).toEqual([]);
  });

  it("prints an agent's file names and reasons without their escape sequences", () => {
    const lines = planLines(
      plan(
        [
          piece('ui', {
            status: 'failed',
            outside: ['a.txt', 'evil\u001b]0;owned\u0007.txt', 'c', 'd', 'e', 'f', 'g'],
            failure: { reason: 'crashed \u001b[2Jhard\nsecond line', stage: 3 },
          }),
        ],
        ['pieces x and y share src/\u001b[31mred'],
      ),
    );
    expect(lines).toEqual([
      '  plan: round 2 by lead, 1 piece (1 failed)',
      '    ⚠ pieces x and y share src/red',
      '    ui  failed',
      '        ⚠ wrote outside its paths: a.txt, evil.txt, c, d, e and 2 more',
      '        failed: crashed hard',
    ]);
  });
});
