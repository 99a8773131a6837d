// Task graphs (issue #31), run for real through the built CLI on the scripted runtime, each in a
// fresh git repository: (1) the plan-build template's six pieces in three levels, every stage taking
// a fixed time, against their critical path (and the same run's stage durations); (2) 50 independent
// pieces at concurrency 8: how many workers are busy over the graph phase; (3) troupe's own time per
// piece (worktree, commit, verification, merge) with zero-latency pieces, against the same git work
// done by hand (`git worktree add`, commit, `git merge`) in a repository of the same size. Every
// figure comes from the task's own events (.troupe/troupe.db). Writes only its own section of
// docs/benchmarks.md.
//   npm run build && node bench/plan-graph.js [--reps 1] [--latency 1500] [--wide-latency 3000]
//     [--files 1000] [--quick] [--no-write]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { parse } from 'yaml';
import { fmtRatio, median, nowMs, tempDir, writeDocSection } from './lib.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'troupe.js');
const TEMPLATE = join(ROOT, 'templates', 'plan-build');
const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
// --quick: fewer pieces and shorter stages, for trying the bench itself (its figures mean little)
const quick = process.argv.includes('--quick');
const REPS = arg('--reps', 1);
const LATENCY = arg('--latency', quick ? 300 : 1500);
const FILES = arg('--files', quick ? 100 : 1000);
const WIDE = { pieces: quick ? 16 : 50, concurrency: 8, latency: arg('--wide-latency', quick ? 300 : 3000) };
const OVERHEAD = { pieces: quick ? 8 : 20, concurrency: 8 };
const TARGETS = { criticalPath: 1.15, busy: 1, overheadMs: 20 };
const log = (m) => process.stderr.write(`${m}\n`);
const git = (cwd, ...args) => execa('git', args, { cwd, stdin: 'ignore' });

/** A git repository of FILES small files in folders of 100, one commit on main. */
async function repository(prefix) {
  const repo = tempDir(`plan-graph-${prefix}`);
  await git(repo, 'init', '-q', '--initial-branch=main');
  await git(repo, 'config', 'user.name', 'bench');
  await git(repo, 'config', 'user.email', 'bench@localhost');
  for (let i = 0; i < FILES; i++) {
    const dir = join(repo, 'lib', `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${i}.js`), `export const v${i} = ${i};\n`);
  }
  await git(repo, 'add', '--all');
  await git(repo, 'commit', '-q', '-m', 'files');
  return repo;
}

/** A repository with the pipeline and its script (JSON is YAML), ready for `troupe run`. */
async function project(prefix, pipelineYaml, script) {
  const repo = await repository(prefix);
  mkdirSync(join(repo, '.troupe', 'pipelines'), { recursive: true });
  writeFileSync(join(repo, '.troupe', 'config.yaml'), 'pipeline:\n  max_stages: 1000\n');
  writeFileSync(join(repo, '.troupe', 'pipelines', 'plan.yaml'), pipelineYaml);
  writeFileSync(join(repo, 'script.yaml'), `${JSON.stringify(script)}\n`);
  return repo;
}

/** One `troupe run` to its end; its events, parsed, with times in ms. */
async function run(repo, env = {}) {
  const r = await execa(
    process.execPath,
    [BIN, 'run', '--pipeline', 'plan', '--script', 'script.yaml', '--no-interactive', '--json', 'build it'],
    { cwd: repo, reject: false, stdin: 'ignore', env: { NO_COLOR: '1', ...env } },
  );
  const status = r.exitCode === 0 ? JSON.parse(r.stdout).status : null;
  if (status !== 'completed')
    throw new Error(`troupe run in ${repo}: exit ${r.exitCode}\n${r.stdout}\n${r.stderr}`);
  const db = new Database(join(repo, '.troupe', 'troupe.db'), { readonly: true });
  try {
    return db
      .prepare('SELECT type, at, data FROM events WHERE superseded_by IS NULL ORDER BY seq')
      .all()
      .map((e) => ({ type: e.type, at: Date.parse(e.at), data: JSON.parse(e.data) }));
  } finally {
    db.close();
  }
}

/**
 * The graph as the log tells it: the planner's stage, the plan's expansion, and per piece when it
 * started, got its worktree, when its worker's stage ran (and how long the stage says it took),
 * when it was verified and when it was merged.
 */
function readGraph(events) {
  const first = (type, pred = () => true) => events.find((e) => e.type === type && pred(e.data));
  const expanded = first('plan_expanded');
  const planner = expanded.data.agent;
  const plannerStage = expanded.data.stage;
  const pieces = new Map(
    expanded.data.pieces.map((p) => [p.id, { id: p.id, depends_on: p.depends_on, stages: [] }]),
  );
  const stagePiece = new Map();
  for (const e of events) {
    const d = e.data;
    if (e.type === 'piece_started') pieces.get(d.piece).started = e.at;
    if (e.type === 'branch_workspace_ready') {
      const piece = pieces.get(d.agent.replace(/^piece-/, ''));
      if (piece) piece.worktree = e.at;
    }
    if (e.type === 'stage_started') {
      const id = /\nPiece: ([a-z0-9-]+)\n/.exec(d.input)?.[1];
      if (id && d.agent !== planner) {
        stagePiece.set(d.stage, id);
        pieces.get(id).stages.push({ start: e.at, end: null, ms: null });
      }
    }
    if (e.type === 'stage_completed' && stagePiece.has(d.stage)) {
      const stage = pieces.get(stagePiece.get(d.stage)).stages.at(-1);
      stage.end = e.at;
      stage.ms = d.durationMs;
    }
    if (e.type === 'verified' && stagePiece.has(d.stage)) pieces.get(stagePiece.get(d.stage)).verified = e.at;
    if (e.type === 'branches_merged') {
      for (const b of d.branches) {
        const piece = pieces.get(/--piece-([a-z0-9-]+)$/.exec(b)?.[1]);
        if (piece) piece.merged = e.at;
      }
    }
  }
  for (const p of pieces.values()) {
    if (p.merged === undefined || p.stages.length !== 1)
      throw new Error(`piece ${p.id}: ${p.stages.length} stages, merged: ${p.merged !== undefined}`);
  }
  const plannerStarted = first('stage_started', (d) => d.stage === plannerStage);
  const plannerDone = first('stage_completed', (d) => d.stage === plannerStage);
  const lastMerged = Math.max(...[...pieces.values()].map((p) => p.merged));
  return {
    pieces: [...pieces.values()],
    plannerStart: plannerStarted.at,
    plannerMs: plannerDone.data.durationMs,
    expanded: expanded.at,
    lastMerged,
    graphMs: lastMerged - expanded.at,
  };
}

/** The longest chain of worker stage durations through depends_on. */
function longestChain(pieces) {
  const byId = new Map(pieces.map((p) => [p.id, p]));
  const memo = new Map();
  const chain = (p) => {
    if (!memo.has(p.id))
      memo.set(p.id, p.stages[0].ms + Math.max(0, ...p.depends_on.map((d) => chain(byId.get(d)))));
    return memo.get(p.id);
  };
  return Math.max(...pieces.map(chain));
}

/** Mean and peak of how many of `intervals` overlap, over [from, to]. */
function overlap(intervals, from, to) {
  const edges = intervals
    .flatMap(([a, b]) => [
      [Math.max(a, from), 1],
      [Math.min(b, to), -1],
    ])
    .sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let open = 0;
  let peak = 0;
  let area = 0;
  let last = from;
  for (const [t, step] of edges) {
    area += open * (t - last);
    last = t;
    open += step;
    peak = Math.max(peak, open);
  }
  return { mean: area / (to - from), peak };
}

/** Where a piece's time goes, from piece_started to its merge: means over the pieces. */
function phases(graph) {
  const mean = (f) => graph.pieces.reduce((sum, p) => sum + f(p), 0) / graph.pieces.length;
  return {
    worktree: mean((p) => p.stages[0].start - p.started),
    ahead: graph.pieces.filter((p) => p.worktree < p.started).length,
    stage: mean((p) => p.stages[0].end - p.stages[0].start),
    verify: mean((p) => p.verified - p.stages[0].end),
    merge: mean((p) => p.merged - p.verified),
  };
}

/** The template's pipeline and script, every stage of the planner and the builder taking `latency`. */
function templateProject() {
  const script = parse(readFileSync(join(TEMPLATE, 'script.yaml'), 'utf8'));
  const timed = (entry) => ({ ...(typeof entry === 'string' ? { reply: entry } : entry), delay_ms: LATENCY });
  script.agents.planner = script.agents.planner.map(timed);
  script.agents.builder = script.agents.builder.map(timed);
  return project('levels', readFileSync(join(TEMPLATE, 'agents.yaml'), 'utf8'), script);
}

/**
 * A planner of `n` independent pieces (each writes its own file), worked on `concurrency` at once;
 * the planner replies after `plannerLatency`, each piece's worker after `latency`.
 */
function flatProject(prefix, n, concurrency, latency, plannerLatency = 0) {
  const ids = Array.from({ length: n }, (_, i) => `p${String(i + 1).padStart(2, '0')}`);
  const pipeline = `apiVersion: troupe/v1
workspace: { isolation: worktree }
agents:
  - id: planner
    runtime: claude
    system_prompt: "Split this into pieces: {{ input }}"
    plan: { worker: builder, verifier: tester, concurrency: ${concurrency} }
  - id: builder
    runtime: claude
    permissions: edit
    context_strategy: last_only
    system_prompt: "{{ input }}"
  - id: tester
    runtime: gemini
    system_prompt: You check work that others built.
`;
  const plan = { pieces: ids.map((id) => ({ id, goal: `part ${id}`, paths: [`src/${id}.js`], size: 'S' })) };
  const script = {
    agents: {
      planner: [{ reply: `${n} independent pieces.\n${JSON.stringify(plan)}`, delay_ms: plannerLatency }],
      builder: ids.map((id) => ({
        when: `Piece: ${id}\\n`,
        reply: `Wrote ${id}.`,
        delay_ms: latency,
        write: { [`src/${id}.js`]: `export const ${id} = true;\n` },
      })),
    },
    gates: { builder: ['approved'] },
  };
  return project(prefix, pipeline, script);
}

/**
 * The git work of `n` pieces done by hand, one after another, in a repository of the same size:
 * a worktree from the task branch, the piece's file committed there, merged into the task
 * worktree. Per piece, in ms.
 */
async function byHand(n) {
  const repo = await repository('by-hand');
  const task = join(tempDir('plan-graph-by-hand-wt'), 'task');
  await git(repo, 'worktree', 'add', '-q', '-b', 'task', task, 'main');
  const t0 = nowMs();
  for (let i = 1; i <= n; i++) {
    const path = join(dirname(task), `piece-${i}`);
    await git(repo, 'worktree', 'add', '-q', '-b', `piece-${i}`, path, 'task');
    mkdirSync(join(path, 'src'), { recursive: true });
    writeFileSync(join(path, 'src', `p${i}.js`), `export const p${i} = true;\n`);
    await git(path, 'add', '--all');
    await git(path, 'commit', '-q', '-m', `piece ${i}`);
    await git(task, 'merge', '-q', '--no-ff', '--no-edit', `piece-${i}`);
  }
  return (nowMs() - t0) / n;
}

/**
 * The git processes of one more zero-latency run (GIT_TRACE2_EVENT; not one of the timed runs,
 * the trace costs time of its own): how many run per piece and their own time, per piece.
 */
async function gitTrace(n, concurrency) {
  const repo = await flatProject('trace', n, concurrency, 0);
  const trace = join(tempDir('plan-graph-trace'), 'trace.json');
  const graph = readGraph(await run(repo, { GIT_TRACE2_EVENT: trace }));
  const processes = new Map();
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line);
    if (e.sid.includes('/')) continue; // a child of a git process: counted in its parent
    const p = processes.get(e.sid) ?? {};
    if (e.event === 'start') Object.assign(p, { at: Date.parse(e.time), verb: e.argv[1] });
    if (e.event === 'exit') p.ms = e.t_abs * 1000;
    processes.set(e.sid, p);
  }
  const inGraph = [...processes.values()].filter(
    (p) => p.at !== undefined && p.at >= graph.expanded && p.at <= graph.lastMerged,
  );
  const verbs = new Map();
  for (const p of inGraph) verbs.set(p.verb, (verbs.get(p.verb) ?? 0) + 1);
  return {
    perPiece: inGraph.length / n,
    msPerPiece: inGraph.reduce((sum, p) => sum + (p.ms ?? 0), 0) / n,
    verbs: [...verbs.entries()].sort((a, b) => b[1] - a[1]).map(([v, c]) => `${v} ${(c / n).toFixed(1)}`),
  };
}

const started = nowMs();
const loadAtStart = loadavg()[0];
const levels = [];
const wide = [];
const zero = [];
const hand = [];
for (let rep = 0; rep < REPS; rep++) {
  const g = readGraph(await run(await templateProject()));
  const chain = longestChain(g.pieces);
  levels.push({
    ...g,
    chain,
    wallMs: g.lastMerged - g.plannerStart,
    criticalMs: g.plannerMs + chain,
    nominalMs: 4 * LATENCY,
  });
  log(
    `six pieces: ${levels.at(-1).wallMs} ms planner to last merge, stage durations' critical path ${levels.at(-1).criticalMs} ms`,
  );

  const w = readGraph(
    await run(await flatProject('wide', WIDE.pieces, WIDE.concurrency, WIDE.latency, LATENCY)),
  );
  const stages = w.pieces.map((p) => [p.stages[0].start, p.stages[0].end]);
  // while a piece waits for a place every place should be busy: until the last worker starts
  const lastStart = Math.max(...stages.map(([start]) => start));
  const saturated = overlap(stages, w.expanded, lastStart);
  const workers = overlap(stages, w.expanded, w.lastMerged);
  const inFlight = overlap(
    w.pieces.map((p) => [p.started, p.merged]),
    w.expanded,
    w.lastMerged,
  );
  wide.push({ ...w, saturated, workers, inFlight, working: (WIDE.pieces * WIDE.latency) / w.graphMs });
  log(
    `${WIDE.pieces} pieces: ${w.graphMs} ms, busy workers ${saturated.mean.toFixed(2)} while pieces wait, ${workers.mean.toFixed(2)} over the graph phase`,
  );

  const z = readGraph(await run(await flatProject('zero', OVERHEAD.pieces, OVERHEAD.concurrency, 0)));
  zero.push(z);
  hand.push(await byHand(OVERHEAD.pieces));
  log(
    `${OVERHEAD.pieces} zero-latency pieces: ${(z.graphMs / OVERHEAD.pieces).toFixed(0)} ms a piece, by hand ${hand.at(-1).toFixed(0)} ms`,
  );
}
const trace = await gitTrace(OVERHEAD.pieces, OVERHEAD.concurrency);
log(`git per piece: ${trace.perPiece.toFixed(1)} processes, ${trace.msPerPiece.toFixed(0)} ms`);
const tookS = (nowMs() - started) / 1000;

// the median run of each part (by its headline figure), so a row's figures come from one run
const medianRun = (runs, key) => {
  const m = median(runs.map(key));
  return runs.reduce((best, r) => (Math.abs(key(r) - m) < Math.abs(key(best) - m) ? r : best));
};
const L = medianRun(levels, (r) => r.wallMs);
const W = medianRun(wide, (r) => r.saturated.mean);
const Z = medianRun(zero, (r) => r.graphMs);
const handMs = median(hand);
const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
const ms = (v) => `${v.toFixed(0)} ms`;
const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
const levelRatio = L.wallMs / L.nominalMs;
const busyShare = W.saturated.mean / WIDE.concurrency;
const zeroPerPiece = Z.graphMs / OVERHEAD.pieces;
const overheadMs = zeroPerPiece - handMs;
const idealWide = Math.ceil(WIDE.pieces / WIDE.concurrency) * WIDE.latency;
// the best any schedule can do over the whole graph phase: its last wave is not full
const idealBusy = (WIDE.pieces * WIDE.latency) / idealWide;
const where = (g) => {
  const p = phases(g);
  return `${ms(p.worktree)} from its start to its worker's (its worktree made ahead for ${p.ahead} of ${g.pieces.length}), ${ms(p.stage)} its worker's stage, ${ms(p.verify)} commit and verification, ${ms(p.merge)} waiting for and making its merge`;
};

const table = [
  '| Figure | troupe | Baseline (same run) | Ratio | Target | Result |',
  '| --- | --- | --- | --- | --- | --- |',
  `| Six pieces in three levels (${LATENCY} ms a stage): planner start → last piece merged | ${s(L.wallMs)} | critical path of the work: planner + 3 levels, 4 × ${LATENCY} ms = ${s(L.nominalMs)} | ${fmtRatio(levelRatio)} | ≤ ${TARGETS.criticalPath}× | ${verdict(levelRatio <= TARGETS.criticalPath)} |`,
  `| ⓘ Same run, against its stage durations | ${s(L.wallMs)} | planner's stage ${s(L.plannerMs)} + longest chain of worker stages ${s(L.chain)} = ${s(L.criticalMs)} | ${fmtRatio(L.wallMs / L.criticalMs)} | — | info |`,
  `| ⓘ Same run, graph phase alone: plan_expanded → last piece merged | ${s(L.graphMs)} | 3 levels × ${LATENCY} ms = ${s(3 * LATENCY)} | ${fmtRatio(L.graphMs / (3 * LATENCY))} | — | info |`,
  `| ${WIDE.pieces} independent pieces (${WIDE.latency} ms each), concurrency ${WIDE.concurrency}: mean busy workers while pieces wait for a place (plan_expanded → the last piece's worker starts) | ${W.saturated.mean.toFixed(2)} (peak ${W.saturated.peak}) | concurrency: ${WIDE.concurrency} | ${(busyShare * 100).toFixed(0)} % | ${WIDE.concurrency} busy (≥ 95 %) | ${verdict(busyShare >= TARGETS.busy * 0.95)} |`,
  `| ⓘ Same run: mean busy workers over the whole graph phase (its last wave holds ${WIDE.pieces % WIDE.concurrency || WIDE.concurrency}) | ${W.workers.mean.toFixed(2)} | best any schedule can do: ${WIDE.pieces} × ${WIDE.latency} ms ÷ ${s(idealWide)} = ${idealBusy.toFixed(2)} | ${((W.workers.mean / idealBusy) * 100).toFixed(0)} % | — | info |`,
  `| ⓘ Same run: workers doing the pieces' work (${WIDE.pieces} × ${WIDE.latency} ms ÷ graph phase) | ${W.working.toFixed(2)} | concurrency: ${WIDE.concurrency} | ${((W.working / WIDE.concurrency) * 100).toFixed(0)} % | — | info |`,
  `| ⓘ Same run: pieces started and not yet merged (a piece holds its place until its verdict; waiting for its merge holds none) | ${W.inFlight.mean.toFixed(2)} (peak ${W.inFlight.peak}) | concurrency: ${WIDE.concurrency} | ${((W.inFlight.mean / WIDE.concurrency) * 100).toFixed(0)} % | — | info |`,
  `| ⓘ Same run: graph phase | ${s(W.graphMs)} | ideal ⌈${WIDE.pieces}/${WIDE.concurrency}⌉ × ${WIDE.latency} ms = ${s(idealWide)} | ${fmtRatio(W.graphMs / idealWide)} | — | info |`,
  `| troupe's own time a piece (${OVERHEAD.pieces} zero-latency pieces, concurrency ${OVERHEAD.concurrency}): graph phase ÷ pieces, minus the same git work by hand | ${ms(overheadMs)} (${ms(zeroPerPiece)} − ${ms(handMs)}) | by hand a piece: \`git worktree add\` + commit + \`git merge\`: ${ms(handMs)} | ${fmtRatio(zeroPerPiece / handMs)} | < ${TARGETS.overheadMs} ms | ${verdict(overheadMs < TARGETS.overheadMs)} |`,
  `| ⓘ git processes a piece (one more zero-latency run, traced) | ${trace.perPiece.toFixed(1)}, ${ms(trace.msPerPiece)} of their own time | by hand: 4 | ${fmtRatio(trace.perPiece / 4)} | — | info |`,
].join('\n');

const breakdown = `Where a piece's time goes, from \`piece_started\` to its merge (means over the pieces):
- six pieces: ${where(L)};
- ${WIDE.pieces} pieces: ${where(W)};
- ${OVERHEAD.pieces} zero-latency pieces: ${where(Z)}.

Git processes a piece in the traced run, by verb: ${trace.verbs.join(', ')}.`;

const section = `<!-- plan-graph:start -->
## Task graphs (plans)

Written by \`node bench/plan-graph.js\` (after \`npm run build\`); do not edit by hand.

- **Date:** ${new Date().toISOString().slice(0, 19)}Z
- **Machine:** Node ${process.version}, ${cpus()[0]?.model.trim() ?? '?'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}, git ${(await git(ROOT, '--version')).stdout.replace('git version ', '')}
- **Bench time:** ${Math.round(tookS)} s; load average (1 min) ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end

${table}

${breakdown}

**Method** (bench/plan-graph.js). Each run is one \`troupe run --pipeline plan --script script.yaml\` process of the
built CLI in a fresh git repository of ${FILES.toLocaleString('en')} small files (one commit; SQLite store on disk;
\`workspace: {isolation: worktree}\`), every piece worked on by \`builder\` in its own worktree, judged by the
plan's verifier \`tester\` in a fresh checkout (scripted \`approved\`), and merged into the task branch by the
planner's integration; the task's checkouts are made ahead while the planner and earlier pieces work
(workspace/checkout-pool.ts), so a piece's worktree and its verifier's checkout are moves, not whole checkouts,
and with every place taken the next pieces' worktrees are made before they start. All times are read from the task's events in \`.troupe/troupe.db\`: the graph phase runs from
\`plan_expanded\` to the last \`branches_merged\`; a worker is busy from its stage's \`stage_started\` to its
\`stage_completed\`. The critical path of the work is the planner's latency plus three levels of piece latency;
the ⓘ row sums instead the same run's stage durations (\`durationMs\` of \`stage_completed\`: the planner's, then
the longest chain of worker stages through \`depends_on\`), which include each stage's commit, made in turn with
the task's other git work, so they hold part of troupe's own time. *Six pieces*: templates/plan-build (its pipeline, plan
concurrency 4, and its script) with \`delay_ms: ${LATENCY}\` on the planner's reply and on every builder reply.
*${WIDE.pieces} pieces*: a planner (replying after ${LATENCY} ms, like any planner's model, while the task makes checkouts
ahead) of ${WIDE.pieces} pieces without dependencies, each writing its own file after ${WIDE.latency} ms, \`plan.concurrency: ${WIDE.concurrency}\`; "busy" is the time-weighted mean number of worker stages
running from \`plan_expanded\` until the last piece's worker starts: all that time some piece waits for a place, so
every place should hold a working worker (over the whole graph phase no schedule keeps ${WIDE.concurrency} busy: the last
wave is not full, hence the ⓘ row against the best possible). *Own time a piece*: the same shape with ${OVERHEAD.pieces} pieces and no latency, the planner's included (so no checkout is made ahead);
the graph phase ÷ ${OVERHEAD.pieces} less the by-hand baseline: in a fresh repository of the same size, a task
worktree, then per piece \`git worktree add -b piece-i <path> task\`, the piece's file written, \`git add\` +
\`git commit\` there, \`git merge --no-ff\` into the task worktree, one after another through execa (worktree
removal is left out on both sides: troupe removes them after the graph phase). The traced run sets
\`GIT_TRACE2_EVENT\` and counts the top-level git processes started during the graph phase and their own
run time (\`t_abs\` at exit: not counting Node's spawn). ${REPS} run${REPS === 1 ? '' : 's'} of each; ${REPS === 1 ? 'one machine, one run: read the ratios, not the milliseconds' : 'the median run of each'}.
<!-- plan-graph:end -->`;

process.stdout.write(`${table}\n\n${breakdown}\n`);
if (!process.argv.includes('--no-write')) log(`updated ${writeDocSection('plan-graph', section)}`);
