import { describe, expect, it } from 'vitest';
import { read, sh, tmpRepo } from './support/git-repo.js';
import { eventLog, project, spawnTroupe, troupe, troupeJson, waitFor } from './support/troupe.js';

/**
 * `plan: { pipeline: … }` through the CLI (docs/task-graphs.md): a project pipeline runs each
 * piece — its first agent starts it, its handoffs run in the piece's worktree — and the piece is
 * verified once its chain ends.
 */

const BUILD_DOC = `agents:
  - id: coder
    runtime: claude
    permissions: edit
    system_prompt: "{{ input }}"
    handoffs: [{ to: writer }]
  - id: writer
    runtime: claude
    permissions: edit
    system_prompt: "Document: {{ input }}"
`;

const PIPELINE = `workspace: { isolation: worktree }
agents:
  - id: planner
    runtime: claude
    system_prompt: "Plan: {{ input }}"
    plan: { pipeline: build-doc, verifier: tester, concurrency: 2 }
    handoffs: [{ to: reviewer }]
  - id: tester
    runtime: claude
    system_prompt: Check it.
  - id: reviewer
    runtime: claude
    system_prompt: "Review: {{ input }}"
`;

const PIECES = ['api', 'ui'];

const planReply = JSON.stringify(
  JSON.stringify({
    pieces: PIECES.map((id) => ({ id, goal: `build ${id}`, paths: [`${id}.txt`, `${id}.md`] })),
  }),
);

/** The coder writes `<piece>.txt`; the writer checks it is there and writes `<piece>.md`. */
const SCRIPT = (delayMs: number) => `agents:
  planner: [${planReply}]
  coder:
${PIECES.map((id) => `    - {when: "Piece: ${id}\\n", reply: "coded ${id}", write: {${id}.txt: "${id}\\n"}}`).join('\n')}
  writer:
${PIECES.map((id) => `    - {when: "coded ${id}", reply: "documented ${id}", delay_ms: ${delayMs}, write: {${id}.md: "# ${id}\\n"}, run: [sh, -c, "test -f ${id}.txt"]}`).join('\n')}
  reviewer: ["looks right"]
gates:
  writer: [approved]
`;

const repo = (delayMs = 0) =>
  tmpRepo({
    'p.yaml': PIPELINE,
    '.troupe/pipelines/build-doc.yaml': BUILD_DOC,
    's.yaml': SCRIPT(delayMs),
    '.gitignore': '.troupe/\n',
  });

type Logged = ReturnType<typeof eventLog>[number];
const ofType = (log: Logged[], type: string) => log.filter((e) => e.type === type);

/** Completed stages of each agent, by piece (its branch). */
function runs(log: Logged[]): Record<string, number> {
  const branchOf = new Map<number, string>();
  for (const e of ofType(log, 'workspace_committed'))
    if (e.data.branch) branchOf.set(Number(e.data.stage), String(e.data.branch));
  const counted: Record<string, number> = {};
  for (const e of ofType(log, 'stage_completed')) {
    const piece = /--piece-(.+)$/.exec(branchOf.get(Number(e.data.stage)) ?? '')?.[1];
    if (!piece) continue;
    const key = `${e.data.agent}@${piece}`;
    counted[key] = (counted[key] ?? 0) + 1;
  }
  return counted;
}

const ONCE_EACH = { 'coder@api': 1, 'writer@api': 1, 'coder@ui': 1, 'writer@ui': 1 };

describe('a sub-pipeline runs each piece', () => {
  it('troupe run: both agents per piece in its worktree, verified once after the second, all merged', async () => {
    const dir = await repo();
    const { code, json } = await troupeJson(dir, [
      'run',
      'build it',
      '--file',
      'p.yaml',
      '--script',
      's.yaml',
    ]);
    expect(json.status, json.error ?? '').toBe('completed');
    expect(code).toBe(0);
    for (const id of PIECES) {
      expect(read(dir, `${id}.txt`)).toBe(`${id}\n`);
      expect(read(dir, `${id}.md`)).toBe(`# ${id}\n`);
    }
    const log = eventLog(dir, json.id);
    expect(runs(log)).toEqual(ONCE_EACH);
    // judged once per piece, at the writer's stage (the chain's end), by the plan's verifier
    expect(ofType(log, 'gate_decided').map((e) => e.data.agent)).toEqual(['writer', 'writer']);
    expect(ofType(log, 'verified').map((e) => e.data.verifier)).toEqual(['tester', 'tester']);
    expect(json.stages.at(-1)?.agent).toBe('reviewer');
    expect((await sh(dir, 'branch', '--list')).trim()).toBe('* main');
  });

  it('kill -9 inside a piece, then resume: the chain goes on and no finished stage runs again', async () => {
    const dir = await repo(1_500);
    const child = spawnTroupe(dir, ['run', 'build it', '--file', 'p.yaml', '--script', 's.yaml']);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const id = await waitFor(() => /troupe (T-[0-9A-F]{6})/.exec(stderr)?.[1]);
    await waitFor(() => {
      try {
        return (
          eventLog(dir, id).some((e) => e.type === 'stage_started' && e.data.agent === 'writer') || undefined
        );
      } catch {
        return undefined; // the store is being made
      }
    }, 30_000);
    child.kill('SIGKILL');
    await child.catch(() => undefined);
    // killed inside a piece: its first agent (either piece's: both start at once) is done
    const before = runs(eventLog(dir, id));
    expect(Object.keys(before).filter((k) => k.startsWith('coder@'))).not.toEqual([]);
    const resumed = await troupeJson(dir, ['resume', id]);
    expect(resumed.json.status, resumed.json.error ?? '').toBe('completed');
    expect(runs(eventLog(dir, id))).toEqual(ONCE_EACH);
    for (const piece of PIECES) expect(read(dir, `${piece}.md`)).toBe(`# ${piece}\n`);
  });
});

describe('troupe validate: plan.pipeline', () => {
  const SUB =
    'agents:\n  - id: coder\n    runtime: scripted\n    handoffs: [{ to: writer }]\n  - id: writer\n    runtime: scripted\n';

  it('a valid sub-pipeline: its agents are part of the pipeline', async () => {
    const dir = project({
      '.troupe/pipelines/build-doc.yaml': SUB,
      'p.yaml':
        'agents:\n  - id: planner\n    runtime: scripted\n    plan: { pipeline: build-doc, verifier: tester }\n  - id: tester\n    runtime: scripted\n',
    });
    const result = await troupe(dir, ['validate', 'p.yaml']);
    expect([result.code, result.stdout]).toEqual([0, '✓ valid: 4 agents (1 handoff, 2 imported agents)']);
  });

  it('each misuse is an error at its place, naming both sides of a clash', async () => {
    const dir = project({
      '.troupe/pipelines/build-doc.yaml': SUB,
      'planning.yaml':
        'agents:\n  - id: inner\n    runtime: scripted\n    plan: { worker: w }\n  - id: w\n    runtime: scripted\n',
      'p.yaml': `agents:
  - id: p1
    runtime: scripted
    plan: { pipeline: build-doc, verifier: writer }
  - id: p2
    runtime: scripted
    plan: { pipeline: ./planning.yaml }
  - id: p3
    runtime: scripted
    plan: { pipeline: build-doc, worker: p1 }
  - id: p4
    runtime: scripted
    plan: { pipeline: bulid-doc }
  - id: p5
    runtime: scripted
    plan: { verifier: p1 }
`,
      'clash.yaml': `agents:
  - id: planner
    runtime: scripted
    plan: { pipeline: build-doc }
  - id: writer
    runtime: scripted
`,
    });
    const result = await troupe(dir, ['validate', 'p.yaml']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe(
      [
        'p.yaml:4:44: error: `writer` cannot verify pieces: it is an agent of pipeline "build-doc", which builds them',
        '  hint: name an agent outside that pipeline: worker != tester',
        'p.yaml:7:23: error: pipeline "./planning.yaml" has a planner, `inner` (planning.yaml:4:11): a piece does not plan again',
        '  hint: name a pipeline without `plan:`',
        'p.yaml:10:23: error: the plan of `p3` names both a worker and a pipeline',
        '  hint: keep one: `worker:` (one agent builds each piece) or `pipeline:` (a sub-pipeline runs each piece)',
        'p.yaml:13:23: error: no pipeline named "bulid-doc" for the plan\'s pieces',
        '  hint: did you mean `build-doc`?',
        'p.yaml:16:11: error: the plan of `p5` names no worker',
        '  hint: add `worker: <agent>` (one agent builds each piece) or `pipeline: <name or ./file.yaml>`',
        '✗ 5 errors, 0 warnings',
      ].join('\n'),
    );
    const clash = await troupe(dir, ['validate', 'clash.yaml']);
    expect(clash.code).toBe(2);
    expect(clash.stdout).toContain(
      'clash.yaml:4:23: error: agent `writer` of pipeline "build-doc" (build-doc.yaml:5:9) has the id of `writer` at clash.yaml:5:9',
    );
  });

  it('a sub-pipeline agent that hands off to several at once: a warning (a piece runs one stage after another)', async () => {
    const dir = project({
      '.troupe/pipelines/wide.yaml':
        'agents:\n  - id: coder\n    runtime: scripted\n    handoffs: [{ to: "writer, linter" }]\n  - id: writer\n    runtime: scripted\n  - id: linter\n    runtime: scripted\n',
      'p.yaml': 'agents:\n  - id: planner\n    runtime: scripted\n    plan: { pipeline: wide }\n',
    });
    const result = await troupe(dir, ['validate', 'p.yaml']);
    expect(result.stdout).toContain(
      ".troupe/pipelines/wide.yaml:4:22: warning: `coder` hands off to several agents at once: inside a piece of `planner`'s plan they are not a fan-out",
    );
  });
});
