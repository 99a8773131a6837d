import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../core/errors.js';
import { showStatus } from './status.js';
import { testPipeline } from './test.js';
import {
  capturedIo,
  GATED_PIPELINE,
  GITHUB_ISSUE,
  runScriptedTask,
  SCRIPTED_PAIR,
  scratchProject,
  scratchRepo,
} from './testing.js';

/** A project with one completed task of the scripted pair; its id. */
async function completedTask(): Promise<{ dir: string; id: string }> {
  const dir = scratchProject(SCRIPTED_PAIR);
  const io = capturedIo(dir);
  await testPipeline({ pipeline: 'pair', input: 'a note', param: [], json: true }, io);
  return { dir, id: (JSON.parse(io.stdout()) as { id: string }).id };
}

describe('troupe status', () => {
  it("prints a task's line and one line per stage", async () => {
    const { dir, id } = await completedTask();
    const io = capturedIo(dir);
    expect(await showStatus(id, {}, io)).toBe(0);
    const lines = io.stdout().split('\n');
    expect(lines[0]).toBe(`${id}  completed  pair  "a note"`);
    expect(lines.filter((l) => /^ {2}\[\d\] /.test(l)).map((l) => l.split(/\s+/).slice(1, 4))).toEqual([
      ['[1]', 'writer', 'completed'],
      ['[2]', 'editor', 'completed'],
    ]);
    expect(lines).toContain('  usage: 8 tok');
  });

  it('prints JSON with the status and no parking', async () => {
    const { dir, id } = await completedTask();
    const io = capturedIo(dir);
    await showStatus(id, { json: true }, io);
    const json = JSON.parse(io.stdout()) as {
      id: string;
      status: string;
      parked: unknown;
      stages: unknown[];
    };
    expect(json).toMatchObject({ id, status: 'completed', parked: null });
    expect(json.stages).toHaveLength(2);
  });

  it('prints the tracker issue the task works on under its first line, and carries it (or null) in --json', async () => {
    const root = scratchProject(GATED_PIPELINE);
    const tracked = await runScriptedTask(root, undefined, 'write', GITHUB_ISSUE);
    const plain = await runScriptedTask(root);
    const text = capturedIo(root);
    await showStatus(tracked, {}, text);
    expect(text.stdout().split('\n')[1]).toBe('  issue: #12 open https://github.com/acme/app/issues/12');
    const none = capturedIo(root);
    await showStatus(plain, {}, none);
    expect(none.stdout()).not.toContain('issue:');

    for (const [id, issue] of [
      [tracked, GITHUB_ISSUE],
      [plain, null],
    ] as const) {
      const json = capturedIo(root);
      await showStatus(id, { json: true }, json);
      expect((JSON.parse(json.stdout()) as { issue: unknown }).issue).toEqual(issue);
    }
  });

  it("prints an issue's url and state safe: escape sequences gone, no line break, no url at all when none", async () => {
    const root = scratchProject(GATED_PIPELINE);
    const id = await runScriptedTask(root, undefined, 'write', {
      ...GITHUB_ISSUE,
      state: 'In\nProgress',
      url: 'https://x.test/1\u001b]8;;https://evil\u0007\r\nissue: #99',
    });
    const local = await runScriptedTask(root, undefined, 'write', {
      ...GITHUB_ISSUE,
      identifier: 'task-7',
      url: null,
    });
    const text = capturedIo(root);
    await showStatus(id, {}, text);
    expect(text.stdout().split('\n')[1]).toBe('  issue: #12 In Progress https://x.test/1 issue: #99');
    const bare = capturedIo(root);
    await showStatus(local, {}, bare);
    expect(bare.stdout().split('\n')[1]).toBe('  issue: task-7 open');
  });

  it("prints the task's cost on its usage line, marked when troupe estimated it from its prices", async () => {
    const root = scratchProject({
      '.troupe/p.yaml': 'agents:\n  - id: a\n    runtime: claude\n    model: claude-sonnet-4-6\n',
      '.troupe/s.yaml':
        'agents:\n  a: [{reply: "ok", usage: {input_tokens: 1000000, output_tokens: 100000}}]\n',
      '.troupe/config.yaml': 'prices:\n  sonnet: {input: 2, output: 10}\n',
    });
    const id = await runScriptedTask(root);
    const io = capturedIo(root);
    await showStatus(id, {}, io);
    expect(io.stdout().split('\n')).toContain('  usage: 1100.0k tok $3.0000 (estimated)');
  });

  it('does not know a task that is not in the store', async () => {
    await expect(showStatus('T-NOSUCH', {}, capturedIo(scratchProject()))).rejects.toThrow(NotFoundError);
  });

  it('prints the plan as a graph after the stages, and carries it in --json', async () => {
    const template = (file: string) => readFileSync(join('templates', 'plan-build', file), 'utf8');
    const dir = await scratchRepo({
      '.troupe/pipelines/pb.yaml': template('agents.yaml'),
      'pb-script.yaml': template('script.yaml'),
    });
    const id = await runScriptedTask(dir, {
      pipeline: '.troupe/pipelines/pb.yaml',
      script: 'pb-script.yaml',
    });

    const io = capturedIo(dir);
    expect(await showStatus(id, {}, io)).toBe(0);
    const lines = io.stdout().split('\n');
    const plan = lines.indexOf('  plan: round 1 by planner, 6 pieces (6 merged)');
    expect(plan).toBeGreaterThan(lines.findLastIndex((l) => /^ {2}\[\d\] /.test(l)));
    // shallowest first; each piece's facts, then its branch. model and config start together and
    // each builder waits for its own worktree, so model's builder is stage 2 or 3.
    expect(lines[plan + 1]).toMatch(
      /^ {4}model {3}merged · builder \[[23]\] · approved by tester · \d+ tok · 1 file \+1 -0$/,
    );
    expect(lines[plan + 2]).toBe(`            troupe/${id}--piece-model`);
    const text = lines.slice(plan + 1).join('\n');
    expect(text).toMatch(/ {4}store {3}merged · after model, config · builder \[\d\] · approved by tester/);
    expect(text).toMatch(/ {4}docs {4}merged · after api, store · /);
    expect(text).toContain('1 file +3 -0');
    expect(lines.slice(plan).filter((l) => l.length > 80)).toEqual([]);

    const json = capturedIo(dir);
    await showStatus(id, { json: true }, json);
    const { plan: graph } = JSON.parse(json.stdout()) as { plan: PlanJson };
    expect(graph).toMatchObject({ round: 1, planner: 'planner', worker: 'builder', verifier: 'tester' });
    expect(graph.pieces.map((p) => [p.id, p.status, p.level, p.depends_on])).toEqual([
      ['model', 'merged', 0, []],
      ['config', 'merged', 0, []],
      ['api', 'merged', 1, ['model']],
      ['store', 'merged', 1, ['model', 'config']],
      ['ui', 'merged', 2, ['api']],
      ['docs', 'merged', 2, ['api', 'store']],
    ]);
    const docs = graph.pieces.find((p) => p.id === 'docs')!;
    expect(docs).toMatchObject({
      verdict: { decision: 'approved' },
      branch: `troupe/${id}--piece-docs`,
      diff: { files: 1, insertions: 3, deletions: 0 },
      outside: [],
      failure: null,
    });
    expect(docs.stages).toHaveLength(1);
    expect(docs.usage.input_tokens).toBeGreaterThan(0);
  }, 120_000);

  it("shows each piece's tier, flags files outside its paths and says why a piece failed", async () => {
    const dir = await scratchRepo({
      '.troupe/config.yaml': ROUTING,
      '.troupe/pipelines/split.yaml': SPLIT_PIPELINE,
      'split.yaml': SPLIT_SCRIPT,
    });
    const id = await runScriptedTask(dir, { pipeline: '.troupe/pipelines/split.yaml', script: 'split.yaml' });

    const io = capturedIo(dir);
    await showStatus(id, {}, io);
    const text = io.stdout();
    expect(text).toContain('  plan: round 1 by planner, 3 pieces (1 merged, 1 failed, 1 waiting)');
    expect(text).toMatch(
      / {4}wide {3}merged · builder \[\d\] · approved by checker · tier small \(haiku\)\n {11}\d+ tok \$0\.\d{4} · 2 files \+2 -0\n/,
    );
    expect(text).toContain('           ⚠ wrote outside its paths: elsewhere.txt\n');
    expect(text).toMatch(
      / {4}bad {4}failed · builder \[\d\] · tier big \(opus\) · 0 tok · no changes\n {11}troupe\/\S+--piece-bad\n {11}failed: /,
    );
    expect(text).toMatch(/ {4}after {2}waiting · after bad\n/);

    const json = capturedIo(dir);
    await showStatus(id, { json: true }, json);
    const pieces = (JSON.parse(json.stdout()) as { plan: PlanJson }).plan.pieces;
    expect(pieces.find((p) => p.id === 'wide')).toMatchObject({
      status: 'merged',
      outside: ['elsewhere.txt'],
    });
    expect(pieces.find((p) => p.id === 'bad')?.failure?.reason).toMatch(/auth/i);
    expect(pieces.find((p) => p.id === 'after')).toMatchObject({
      status: 'waiting',
      stages: [],
      branch: null,
      diff: null,
    });
  }, 120_000);
});

interface PlanJson {
  round: number;
  pieces: Array<{
    id: string;
    status: string;
    level: number;
    depends_on: string[];
    stages: number[];
    usage: { input_tokens: number };
    failure: { reason: string } | null;
  }>;
}

/** Routing tiers for the builder's `model: auto`: an S piece goes to `small`. */
const ROUTING = `routing:
  tiers: {small: {runtime: claude, model: haiku}, big: {runtime: claude, model: opus}}
  rules: [{tier: small, size: S}]
  default: big
  learn: false
`;

/** Three pieces, no re-plan: `wide` writes beside its paths, `bad` fails, `after` waits on it. */
const SPLIT_PIPELINE = `workspace: { isolation: worktree }
agents:
  - id: planner
    runtime: claude
    plan: { worker: builder, verifier: checker, replans: 0 }
  - id: builder
    runtime: claude
    model: auto
    system_prompt: "{{ input }}"
  - id: checker
    runtime: claude
`;
const SPLIT_SCRIPT = `agents:
  planner:
    - |
      {"pieces": [
        {"id": "wide", "goal": "one file", "paths": ["wide.txt"], "size": "S"},
        {"id": "bad", "goal": "fails", "paths": ["bad.txt"]},
        {"id": "after", "goal": "after bad", "paths": ["after.txt"], "depends_on": ["bad"]}
      ]}
  builder:
    - when: "Piece: wide\\n"
      reply: wrote it
      write: { wide.txt: "wide\\n", elsewhere.txt: "not mine\\n" }
    - when: "Piece: bad\\n"
      error: auth
gates:
  builder: [approved]
`;
