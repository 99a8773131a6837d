import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { read, sh, tmpRepo } from './support/git-repo.js';
import { eventLog, spawnTroupe, troupe, troupeJson, waitFor } from './support/troupe.js';

/**
 * Plans as task graphs through the CLI, in real git repositories (docs/task-graphs.md): a
 * planner's pieces run in worktrees of their own once their dependencies are merged, and a kill,
 * a failure or a cancel anywhere loses no finished piece.
 */

const PIPELINE = (plan: string) => `workspace: { isolation: worktree }
agents:
  - id: planner
    runtime: claude
    system_prompt: "Plan: {{ input }}"
    plan: { worker: builder, verifier: tester, ${plan} }
    on_conflict: integrator
    handoffs: [{ to: reviewer }]
  - id: builder
    runtime: claude
    permissions: edit
    system_prompt: "{{ input }}"
  - id: tester
    runtime: claude
    system_prompt: Check it.
  - id: integrator
    runtime: claude
    permissions: edit
    system_prompt: "{{ input }}"
  - id: reviewer
    runtime: claude
    system_prompt: "Review: {{ input }}"
`;

interface Piece {
  id: string;
  depends_on?: string[];
}

/** Six pieces in three levels. */
const SIX: Piece[] = [
  { id: 'model' },
  { id: 'config' },
  { id: 'api', depends_on: ['model'] },
  { id: 'store', depends_on: ['model', 'config'] },
  { id: 'ui', depends_on: ['api'] },
  { id: 'docs', depends_on: ['api', 'store'] },
];

const planReply = (pieces: Piece[]) =>
  JSON.stringify(
    JSON.stringify({
      pieces: pieces.map((p) => ({
        id: p.id,
        goal: `build ${p.id}`,
        paths: [`${p.id}.txt`],
        depends_on: p.depends_on ?? [],
      })),
    }),
  );

/**
 * The builder writes `<piece>.txt` and checks (a command that fails the stage otherwise) that the
 * files of the pieces it depends on are already in its worktree.
 */
function builderEntries(pieces: Piece[], delayMs: number, extra: Record<string, string> = {}): string {
  return pieces
    .map((p) => {
      const deps = (p.depends_on ?? []).map((d) => `${d}.txt`);
      const run = `[sh, -c, ${JSON.stringify(`test -f ${p.id}.txt${deps.map((d) => ` && test -f ${d}`).join('')}`)}]`;
      return (
        extra[p.id] ??
        `    - {when: "Piece: ${p.id}\\n", reply: "built ${p.id}", delay_ms: ${delayMs}, write: {${p.id}.txt: "${p.id}\\n"}, run: ${run}}`
      );
    })
    .join('\n');
}

function script(options: {
  plans: string[];
  pieces: Piece[];
  delayMs?: number;
  extra?: Record<string, string>;
}): string {
  return `agents:
  planner:
${options.plans.map((p) => `    - ${p}`).join('\n')}
  builder:
${builderEntries(options.pieces, options.delayMs ?? 0, options.extra)}
  integrator: [{reply: "re-applied the conflicting piece by hand", write: {shared.txt: "both\\n", a.txt: "a\\n", b.txt: "b\\n"}}]
  reviewer: ["looks right"]
gates:
  builder: [approved]
`;
}

async function graphRepo(plan: string, scriptText: string): Promise<string> {
  return tmpRepo({ 'p.yaml': PIPELINE(plan), 's.yaml': scriptText, '.gitignore': '.troupe/\n' });
}

const run = (dir: string) => troupeJson(dir, ['run', 'build it', '--file', 'p.yaml', '--script', 's.yaml']);

type Logged = ReturnType<typeof eventLog>[number];
const ofType = (log: Logged[], type: string) => log.filter((e) => e.type === type);

/** The builder's completed stages, by piece (from the lineage each piece works in). */
function builderRuns(log: Logged[]): Record<string, number> {
  const lineageOf = new Map<string, string>();
  for (const e of ofType(log, 'branch_workspace_ready'))
    lineageOf.set(String(e.data.lineage), String(e.data.agent));
  const stageBranch = new Map<number, string>();
  for (const e of ofType(log, 'workspace_committed'))
    if (e.data.branch) stageBranch.set(Number(e.data.stage), String(e.data.branch));
  const runs: Record<string, number> = {};
  for (const e of ofType(log, 'stage_completed')) {
    if (e.data.agent !== 'builder') continue;
    const piece = /--piece-(.+)$/.exec(stageBranch.get(Number(e.data.stage)) ?? '')?.[1] ?? '?';
    runs[piece] = (runs[piece] ?? 0) + 1;
  }
  return runs;
}

/** `troupe run` in the background, and its task's id once it prints it. */
async function runInBackground(dir: string) {
  const child = spawnTroupe(dir, ['run', 'build it', '--file', 'p.yaml', '--script', 's.yaml']);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const id = await waitFor(() => /troupe (T-[0-9A-F]{6})/.exec(stderr)?.[1]);
  return { child, id };
}

/** Resolves once the task's log shows `moment`. */
async function logShows(dir: string, id: string, moment: (log: Logged[]) => boolean): Promise<void> {
  await waitFor(() => {
    try {
      return moment(eventLog(dir, id)) || undefined;
    } catch {
      return undefined; // the store is being made
    }
  }, 30_000);
}

describe('a plan runs as a graph', () => {
  it('six pieces in three levels: each starts from its dependencies merged, all merged, branches gone', async () => {
    const dir = await graphRepo('concurrency: 3', script({ plans: [planReply(SIX)], pieces: SIX }));
    const { code, json } = await run(dir);
    expect(json.status, json.error ?? '').toBe('completed');
    expect(code).toBe(0);
    for (const p of SIX) expect(read(dir, `${p.id}.txt`)).toBe(`${p.id}\n`);
    expect((await sh(dir, 'branch', '--list')).trim()).toBe('* main');
    // nothing is left behind: no piece's worktree, no checkout a verifier used or the plan made ahead
    expect((await sh(dir, 'worktree', 'list', '--porcelain')).match(/^worktree /gm)).toHaveLength(1);
    const log = eventLog(dir, json.id);
    const seqOf = (type: string, match: (e: Logged) => boolean) =>
      log.find((e) => e.type === type && match(e))!.seq;
    for (const p of SIX) {
      const started = seqOf('piece_started', (e) => e.data.piece === p.id);
      for (const d of p.depends_on ?? []) {
        const merged = seqOf('branches_merged', (e) =>
          (e.data.branches as string[]).some((b) => b.endsWith(`--piece-${d}`)),
        );
        expect(merged, `${d} merged before ${p.id} starts`).toBeLessThan(started);
      }
    }
    expect(builderRuns(log)).toEqual({ model: 1, config: 1, api: 1, store: 1, ui: 1, docs: 1 });
    // the plan's verifier judged every piece in a fresh checkout (worker != tester)
    expect(ofType(log, 'verified').map((e) => e.data.verifier)).toEqual(Array(6).fill('tester'));
    expect(json.stages.at(-1)?.agent).toBe('reviewer');
  });

  it('never runs more pieces at once than plan.concurrency; the next piece’s worktree is made while every place is taken', async () => {
    const wide = Array.from({ length: 5 }, (_, i) => ({ id: `p${i}` }));
    const dir = await graphRepo(
      'concurrency: 2',
      script({ plans: [planReply(wide)], pieces: wide, delayMs: 1_000 }),
    );
    const { json } = await run(dir);
    expect(json.status, json.error ?? '').toBe('completed');
    const log = eventLog(dir, json.id);
    // p2 waited for a place with its worktree made: it was made before p2 started
    const seqOf = (type: string, key: string, value: string) =>
      log.find((e) => e.type === type && e.data[key] === value)!.seq;
    expect(seqOf('branch_workspace_ready', 'agent', 'piece-p2')).toBeLessThan(
      seqOf('piece_started', 'piece', 'p2'),
    );
    expect((await sh(dir, 'worktree', 'list', '--porcelain')).match(/^worktree /gm)).toHaveLength(1);
    // a piece holds a place from its start until its verdict (its merge holds none)
    let running = 0;
    let most = 0;
    const judged = new Set<number>();
    for (const e of log) {
      if (e.type === 'piece_started') most = Math.max(most, ++running);
      if (e.type === 'stage_started' && e.data.agent === 'builder') judged.add(e.data.stage as number);
      if (e.type === 'gate_decided' && e.data.decision === 'approved' && judged.has(e.data.stage as number))
        running--;
    }
    expect(most).toBe(2);
    expect(running).toBe(0);
  });

  it('a plan that does not validate goes back to the planner with the pieces named', async () => {
    const cycle: Piece[] = [
      { id: 'a', depends_on: ['b'] },
      { id: 'b', depends_on: ['a'] },
    ];
    const fine: Piece[] = [{ id: 'a' }, { id: 'b', depends_on: ['a'] }];
    const dir = await graphRepo(
      'max_rounds: 2',
      script({ plans: [planReply(cycle), planReply(fine)], pieces: fine }),
    );
    const { json } = await run(dir);
    expect(json.status, json.error ?? '').toBe('completed');
    const rejected = ofType(eventLog(dir, json.id), 'output_rejected');
    expect(rejected.map((e) => e.data.check)).toEqual(['plan']);
    expect(rejected[0]!.data.reason).toContain('the dependencies go round: a → b → a');
    expect(json.stages[1]!.input).toContain('the dependencies go round');
  });

  it('a piece that wrote outside its paths is flagged, and its conflict goes to the integrator', async () => {
    const pieces: Piece[] = [{ id: 'a' }, { id: 'b' }];
    const sprawl = (id: string) =>
      `    - {when: "Piece: ${id}\\n", reply: "built ${id}", delay_ms: 100, write: {${id}.txt: "${id}\\n", shared.txt: "${id} was here\\n"}}`;
    const dir = await graphRepo(
      'concurrency: 2',
      script({ plans: [planReply(pieces)], pieces, extra: { a: sprawl('a'), b: sprawl('b') } }),
    );
    const { json } = await run(dir);
    expect(json.status, json.error ?? '').toBe('completed');
    const log = eventLog(dir, json.id);
    expect(ofType(log, 'piece_outside_paths').map((e) => [e.data.piece, e.data.files])).toEqual(
      expect.arrayContaining([
        ['a', ['shared.txt']],
        ['b', ['shared.txt']],
      ]),
    );
    expect(ofType(log, 'branch_conflict').map((e) => [e.data.files, e.data.resolver])).toEqual([
      [['shared.txt'], 'integrator'],
    ]);
    // the integrator is shown the file on both sides
    const integrator = json.stages.find((s) => s.agent === 'integrator')!;
    expect(integrator.input).toMatch(
      /--- shared\.txt in troupe\/T-\w+ ---\n(a|b) was here\n--- shared\.txt in troupe\/T-\w+--piece-(a|b) ---\n(a|b) was here/,
    );
    expect(read(dir, 'shared.txt')).toBe('both\n');
    expect(read(dir, 'a.txt') + read(dir, 'b.txt')).toBe('a\nb\n');
  });
});

describe('failures stay with their piece', () => {
  const failing = (id: string) => `    - {when: "Piece: ${id}\\n", error: auth}`;

  it('a failed piece sends the rest back to the planner; finished pieces are not run again', async () => {
    const first: Piece[] = [{ id: 'a' }, { id: 'b' }, { id: 'c', depends_on: ['b'] }];
    const second: Piece[] = [
      { id: 'b2', depends_on: ['a'] },
      { id: 'c', depends_on: ['b2'] },
    ];
    const dir = await graphRepo(
      'replans: 1',
      script({
        plans: [planReply(first), planReply(second)],
        pieces: [{ id: 'a' }, { id: 'b2', depends_on: ['a'] }, { id: 'c', depends_on: ['b2'] }],
        extra: { b: failing('b') },
      }).replace('  integrator:', `${failing('b')}\n  integrator:`),
    );
    const { json } = await run(dir);
    expect(json.status, json.error ?? '').toBe('completed');
    const log = eventLog(dir, json.id);
    expect(ofType(log, 'piece_failed').map((e) => e.data.piece)).toEqual(['b']);
    const replanned = ofType(log, 'plan_replanned');
    expect(replanned.map((e) => [e.data.failed, e.data.round])).toEqual([[['b'], 1]]);
    expect(String(replanned[0]!.data.input)).toMatch(/Already merged.*: a/);
    expect(builderRuns(log)).toEqual({ a: 1, b2: 1, c: 1 });
    expect(read(dir, 'c.txt')).toBe('c\n');
  });

  it('with no re-plan left the task fails naming the piece and those that waited on it', async () => {
    const pieces: Piece[] = [{ id: 'a' }, { id: 'b' }, { id: 'c', depends_on: ['b'] }];
    const dir = await graphRepo(
      'replans: 0',
      script({ plans: [planReply(pieces)], pieces, extra: { b: failing('b') } }),
    );
    const { code, json } = await run(dir);
    expect(json.status).toBe('failed');
    expect(code).not.toBe(0);
    expect(json.error).toMatch(/^piece b \(.*\) failed; c waited on them; 0 re-plans used/);
    // the finished sibling was merged into the task branch all the same
    const log = eventLog(dir, json.id);
    expect(builderRuns(log)).toEqual({ a: 1 });
  });
});

describe('kill -9 anywhere in a graph, then resume', () => {
  const moments: Array<[string, (log: Logged[]) => boolean]> = [
    ['right after the expansion', (log) => ofType(log, 'plan_expanded').length > 0],
    ['during a piece', (log) => log.some((e) => e.type === 'stage_started' && e.data.agent === 'builder')],
    ['after a merge', (log) => ofType(log, 'branches_merged').length > 0],
  ];

  it.each(moments)(
    'killed %s: resume finishes and no finished piece runs again',
    async (_when, moment) => {
      const dir = await graphRepo(
        'concurrency: 3',
        script({ plans: [planReply(SIX)], pieces: SIX, delayMs: 300 }),
      );
      const { child, id } = await runInBackground(dir);
      await logShows(dir, id, moment);
      child.kill('SIGKILL');
      await child;
      // and what a kill while troupe wrote a new branch's keys leaves: the repository's config lock
      const configLock = join(dir, '.git', 'config.lock');
      copyFileSync(join(dir, '.git', 'config'), configLock);
      const before = builderRuns(eventLog(dir, id));
      const resumed = await troupeJson(dir, ['resume', id]);
      expect(resumed.json.status, resumed.json.error ?? '').toBe('completed');
      const after = builderRuns(eventLog(dir, id));
      expect(after).toEqual({ model: 1, config: 1, api: 1, store: 1, ui: 1, docs: 1 });
      for (const [piece, n] of Object.entries(before)) expect(after[piece], piece).toBe(n);
      expect(ofType(eventLog(dir, id), 'plan_expanded')).toHaveLength(1);
      for (const p of SIX) expect(read(dir, `${p.id}.txt`)).toBe(`${p.id}\n`);
      expect((await sh(dir, 'branch', '--list')).trim()).toBe('* main');
      expect((await sh(dir, 'worktree', 'list', '--porcelain')).match(/^worktree /gm)).toHaveLength(1);
      expect(existsSync(configLock)).toBe(false);
    },
    60_000, // resume first waits out the config lock: it could be a live writer's
  );
  it('killed with a piece’s worktree made ahead of its start: resume starts it there', async () => {
    const dir = await graphRepo(
      'concurrency: 1',
      script({ plans: [planReply(SIX)], pieces: SIX, delayMs: 600 }),
    );
    const { child, id } = await runInBackground(dir);
    // model works; config, ready, waits for the one place with its worktree made
    const madeAhead = (log: Logged[]) =>
      log.some((e) => e.type === 'branch_workspace_ready' && e.data.agent === 'piece-config') &&
      !log.some((e) => e.type === 'piece_started' && e.data.piece === 'config');
    await logShows(dir, id, madeAhead);
    child.kill('SIGKILL');
    await child;
    // and what the kill leaves of a checkout being made ahead: registered, its files not written yet
    const half = `.troupe/tmp/verify-${id}-0badc0de`;
    await sh(dir, 'worktree', 'add', '--detach', '--no-checkout', '--quiet', half, 'HEAD');
    const resumed = await troupeJson(dir, ['resume', id]);
    expect(resumed.json.status, resumed.json.error ?? '').toBe('completed');
    const log = eventLog(dir, id);
    expect(builderRuns(log)).toEqual({ model: 1, config: 1, api: 1, store: 1, ui: 1, docs: 1 });
    // config's worktree was made once: resume started it in the one the log knew
    expect(ofType(log, 'branch_workspace_ready').filter((e) => e.data.agent === 'piece-config')).toHaveLength(
      1,
    );
    for (const p of SIX) expect(read(dir, `${p.id}.txt`)).toBe(`${p.id}\n`);
    expect((await sh(dir, 'branch', '--list')).trim()).toBe('* main');
    expect((await sh(dir, 'worktree', 'list', '--porcelain')).match(/^worktree /gm)).toHaveLength(1);
  });
});

describe('cancel', () => {
  it('stops the whole graph: no piece starts after it', async () => {
    const dir = await graphRepo(
      'concurrency: 2',
      script({ plans: [planReply(SIX)], pieces: SIX, delayMs: 2_000 }),
    );
    const { child, id } = await runInBackground(dir);
    await logShows(dir, id, (log) =>
      log.some((e) => e.type === 'stage_started' && e.data.agent === 'builder'),
    );
    expect((await troupe(dir, ['cancel', id])).code).toBe(0);
    await child;
    const log = eventLog(dir, id);
    const cancelled = ofType(log, 'task_cancelled')[0]!.seq;
    expect(
      log.filter((e) => e.seq > cancelled && (e.type === 'piece_started' || e.type === 'stage_started')),
    ).toEqual([]);
    expect((await troupeJson(dir, ['status', id])).json.status).toBe('cancelled');
    await execa('git', ['worktree', 'prune'], { cwd: dir });
  });
});
