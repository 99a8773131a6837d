import { describe, expect, it } from 'vitest';
import { memoryWorld } from '../../app/test-doubles.js';
import type { McpDirective, TroupeMcpCall } from '../../core/mcp-call.js';
import type { McpServer } from '../../core/pipeline.js';
import type { TroupeMcp } from '../ports.js';
import { agent, handoff, pipeline, session } from '../test-pipelines.js';

/**
 * `mcp: [troupe]` in the executor, on the in-memory world: what each call may do, and the
 * recorded tool calls read as the directives they stand for (test/troupe-mcp.test.ts runs the
 * real server under each CLI).
 */

const troupe: McpServer = { server: 'troupe', command: null, args: [], env: null };
const github: McpServer = { server: 'github', command: 'gh-mcp', args: [], env: null };

/** A TroupeMcp that answers each stage's recorded calls from `byStage`, and keeps the calls it saw. */
function recordedCalls(byStage: Record<number, McpDirective[]> = {}) {
  const calls: TroupeMcpCall[] = [];
  const port: TroupeMcp = {
    server(call) {
      calls.push(call);
      return { server: 'troupe', command: '/bin/troupe', args: ['mcp'], env: { CALL: String(call.stage) } };
    },
    directives: (call) => byStage[call.stage] ?? [],
  };
  return { calls, port };
}

describe('mcp: [troupe] in the executor', () => {
  it('reads the tool calls as directives before the output: the handoff and chunks they stand for', async () => {
    const mcp = recordedCalls({
      1: [
        { kind: 'handoff', to: ['c'] },
        { kind: 'chunk_add', description: 'tests' },
        { kind: 'chunk_done', id: 'C-001' },
      ],
    });
    const world = memoryWorld({ troupeMcp: mcp.port });
    const p = pipeline(
      agent('a', {
        mcp: [troupe, github],
        handoffs: [handoff('b, c', 'auto')],
        chunks: { enabled: true, initial: ['draft'] },
      }),
      agent('b'),
      agent('c'),
    );
    const id = world.service.start({
      pipeline: p,
      input: 'go',
      script: { agents: { a: ['wrote it'], b: ['B'], c: ['C'] }, gates: {}, human: {} },
    });
    const done = await world.service.continue(id);
    expect(done.stages.map((s) => s.agent)).toEqual(['a', 'c']);
    expect(done.stages[0]!.output).toBe('HANDOFF: c\nCHUNK_ADD: tests\nCHUNK_DONE: C-001\n\nwrote it');
    expect(done.chunks.map((c) => [c.id, c.description, c.status])).toEqual([
      ['C-001', 'draft', 'done'],
      ['C-002', 'tests', 'pending'],
    ]);
    expect(mcp.calls).toEqual([
      {
        taskId: id,
        agent: 'a',
        stage: 1,
        attempt: 1,
        handoffTargets: ['b', 'c'],
        canAsk: false,
        voteKeyword: null,
      },
    ]);
  });

  it('leaves agents without troupe alone, and an agent with nothing recorded keeps its output', async () => {
    const mcp = recordedCalls();
    const world = memoryWorld({ troupeMcp: mcp.port });
    const p = pipeline(
      agent('a', { mcp: [troupe], handoffs: [handoff('b')] }),
      agent('b', { mcp: [github] }),
    );
    const id = world.service.start({
      pipeline: p,
      input: 'go',
      script: { agents: { a: ['A'], b: ['B'] }, gates: {}, human: {} },
    });
    const done = await world.service.continue(id);
    expect(done.stages.map((s) => s.output)).toEqual(['A', 'B']);
    expect(mcp.calls.map((c) => c.agent)).toEqual(['a']);
  });

  it('a session turn may vote with the session’s keyword, and hands nothing off; the vote counts', async () => {
    const mcp = recordedCalls({
      1: [{ kind: 'vote', agree: true, keyword: 'VOTE: AGREE' }],
      2: [{ kind: 'vote', agree: true, keyword: 'VOTE: AGREE' }],
    });
    const world = memoryWorld({ troupeMcp: mcp.port });
    const p = pipeline(
      session('talk', ['x', 'y']),
      agent('x', {
        mcp: [troupe],
        handoffs: [handoff('y', 'auto')],
        human_input: { enabled: true, mode: 'on_demand', prompt: '' },
      }),
      agent('y', { mcp: [troupe] }),
    );
    const id = world.service.start({
      pipeline: p,
      input: 'tabs?',
      script: { agents: { x: ['spaces'], y: ['tabs'] }, gates: {}, human: {} },
    });
    const done = await world.service.continue(id);
    expect(done.status).toBe('completed');
    expect(mcp.calls.slice(0, 2)).toEqual([
      {
        taskId: id,
        agent: 'x',
        stage: 1,
        attempt: 1,
        handoffTargets: [],
        canAsk: true,
        voteKeyword: 'VOTE: AGREE',
      },
      {
        taskId: id,
        agent: 'y',
        stage: 2,
        attempt: 1,
        handoffTargets: [],
        canAsk: false,
        voteKeyword: 'VOTE: AGREE',
      },
    ]);
    // both agreed in the first round, through the tool only
    expect(done.stages.filter((s) => s.turn).map((s) => s.turn!.round)).toEqual([1, 1]);
  });
});
