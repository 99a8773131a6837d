// troupe's benchmarks: `node bench/run.js` after the build (or `npm run bench`).
// Prints a table and rewrites docs/benchmarks.md. Every figure is given against a baseline
// measured in the same run, because the machines are shared and noisy.
// Options: --quick (fewer runs, for trying the bench itself), --strict (exit 1 if a target fails).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem, type } from 'node:os';
import { fileURLToPath } from 'node:url';
import { fmtMs, fmtRatio, nowMs } from './lib.js';
import { measureMemory } from './memory.js';
import { measureOverhead } from './overhead.js';
import { measureStartup } from './startup.js';

const quick = process.argv.includes('--quick');
const strict = process.argv.includes('--strict');
const DOC = fileURLToPath(new URL('../docs/benchmarks.md', import.meta.url));
const log = (line) => process.stderr.write(`${line}\n`);

const pkgVersion = (name) =>
  JSON.parse(
    readFileSync(fileURLToPath(new URL(`../node_modules/${name}/package.json`, import.meta.url)), 'utf8'),
  ).version;
const troupeVersion = JSON.parse(
  readFileSync(fileURLToPath(new URL('../package.json', import.meta.url)), 'utf8'),
).version;

/**
 * The disks here are shared and slow to absorb bursts of writes (a build just before, the
 * previous section's temp files): flush what is pending and let the disk settle before each
 * section, so one section's writes do not land in the next one's figures.
 */
function settle() {
  spawnSync('sync', { stdio: 'ignore' });
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, quick ? 200 : 3000);
}

const began = nowMs();
settle();
log('overhead per stage (troupe vs LangGraph JS, in this process)');
const o = await measureOverhead({ warmup: quick ? 3 : 10, runs: quick ? 8 : 50, log });
settle();
log('startup (child processes)');
const s = measureStartup({ warmup: quick ? 1 : 2, runs: quick ? 4 : 10, log });
settle();
log('memory (child processes)');
const m = measureMemory({ runs: quick ? 1 : 3, log });
const tookS = (nowMs() - began) / 1000;

const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
const speedup = o.langGraphNode / o.troupeStage;
const growth = m.peak200Mb / m.peak50Mb;
const mb = (x) => `${x.toFixed(1)} MB`;
const lg = `LangGraph ${pkgVersion('@langchain/langgraph')} + SqliteSaver ${pkgVersion('@langchain/langgraph-checkpoint-sqlite')}`;

/** [figure, troupe, baseline, ratio, target, result] */
const rows = [
  [
    'Overhead per stage, 10-stage linear pipeline',
    fmtMs(o.troupeStage),
    `one event commit (raw SQLite, WAL+NORMAL): ${fmtMs(o.rawCommitMs, 4)}`,
    `${fmtRatio(o.troupeStage / o.rawCommitMs)} a commit`,
    '≤ 0.3 ms',
    verdict(o.troupeStage <= 0.3),
  ],
  [
    'Overhead vs LangGraph JS (same 10-node chain)',
    fmtMs(o.troupeStage),
    `${lg}, durability sync, synchronous=NORMAL: ${fmtMs(o.langGraphNode)} a node`,
    `LangGraph ÷ troupe = ${fmtRatio(speedup)}`,
    '≥ 5×',
    verdict(speedup >= 5),
  ],
  [
    'ⓘ Overhead incl. task creation (start + continue)',
    fmtMs(o.troupeStartAndStage),
    `same LangGraph: ${fmtMs(o.langGraphNode)}`,
    `LangGraph ÷ troupe = ${fmtRatio(o.langGraphNode / o.troupeStartAndStage)}`,
    '—',
    'info',
  ],
  [
    'ⓘ Overhead vs LangGraph with its defaults',
    fmtMs(o.troupeStage),
    `${lg}, durability async, synchronous=FULL (new file): ${fmtMs(o.langGraphDefaultNode)}`,
    `LangGraph ÷ troupe = ${fmtRatio(o.langGraphDefaultNode / o.troupeStage)}`,
    '—',
    'info',
  ],
  [
    '`troupe --version`, wall',
    fmtMs(s.versionMs, 1),
    `\`node -e 0\`: ${fmtMs(s.baselineMs, 1)}`,
    fmtRatio(s.versionMs / s.baselineMs),
    '< 150 ms',
    verdict(s.versionMs < 150),
  ],
  [
    '`troupe validate` (10 agents), wall',
    fmtMs(s.validateMs, 1),
    `\`node -e 0\`: ${fmtMs(s.baselineMs, 1)}`,
    fmtRatio(s.validateMs / s.baselineMs),
    '< 150 ms',
    verdict(s.validateMs < 150),
  ],
  [
    'Peak RSS, `troupe run`, 200 stages (200-agent linear pipeline)',
    mb(m.peakLinear200Mb),
    `\`node -e 0\`: ${mb(m.baselineMb)}`,
    fmtRatio(m.peakLinear200Mb / m.baselineMb),
    '< 150 MB',
    verdict(m.peakLinear200Mb < 150),
  ],
  [
    'Peak RSS, `troupe run`, 200 stages (2-agent loop)',
    mb(m.peak200Mb),
    `\`node -e 0\`: ${mb(m.baselineMb)}`,
    fmtRatio(m.peak200Mb / m.baselineMb),
    '< 150 MB',
    verdict(m.peak200Mb < 150),
  ],
  [
    'Peak RSS growth, 2-agent loop, 200 vs 50 stages',
    mb(m.peak200Mb),
    `50 stages: ${mb(m.peak50Mb)}`,
    fmtRatio(growth),
    '≤ 1.10× (no growth with stages run)',
    verdict(growth <= 1.1),
  ],
  [
    'ⓘ Peak RSS, `troupe run`, 2-agent loop, 800 stages',
    mb(m.peak800Mb),
    `200 stages: ${mb(m.peak200Mb)}`,
    fmtRatio(m.peak800Mb / m.peak200Mb),
    '—',
    'info',
  ],
  [
    'ⓘ One 800-stage loop task (API): RSS after stage 800',
    mb(m.rssAtStage800Mb),
    `after stage 200: ${mb(m.rssAtStage200Mb)}`,
    fmtRatio(m.rssAtStage800Mb / m.rssAtStage200Mb),
    '—',
    'info',
  ],
  [
    'ⓘ Same task: heap after a full GC, stage 800',
    mb(m.heapAtStage800Mb),
    `stage 200: ${mb(m.heapAtStage200Mb)}`,
    `${fmtRatio(m.heapAtStage800Mb / m.heapAtStage200Mb)} (${m.heapPerStageKb.toFixed(1)} kB a stage)`,
    '—',
    'info',
  ],
  [
    'ⓘ Same task: time a stage, stages 601–800',
    fmtMs(m.msPerStageLast200),
    `stages 1–200: ${fmtMs(m.msPerStageFirst200)}`,
    fmtRatio(m.msPerStageLast200 / m.msPerStageFirst200),
    '—',
    'info',
  ],
];

const cpu = cpus();
const machine = `Node ${process.version}, ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${type()} ${release()}`;
const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');

// console table
const head = ['figure', 'troupe', 'baseline (same run)', 'ratio', 'target', 'result'];
const plain = (cell) => cell.replaceAll('`', '');
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => plain(r[i]).length)));
const line = (cells) => cells.map((c, i) => plain(c).padEnd(widths[i])).join('  ');
console.log(`troupe ${troupeVersion} benchmarks, ${date}\n${machine}\n`);
console.log(line(head));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const r of rows) console.log(line(r));
console.log(`\n(${tookS.toFixed(0)} s; written to docs/benchmarks.md)`);

const md = `# Benchmarks

Written by \`node bench/run.js\` (\`npm run bench\` builds first); do not edit by hand.
Every figure stands next to a baseline measured in the same run, because the machines are
shared and noisy: compare ratios across runs, not milliseconds. Before each section the bench flushes
the disk (\`sync\`) and waits 3 s.

- **Date:** ${date}
- **Machine:** ${machine}
- **troupe:** ${troupeVersion} (dist/ as built) · **LangGraph:** @langchain/langgraph ${pkgVersion('@langchain/langgraph')}, @langchain/langgraph-checkpoint-sqlite ${pkgVersion('@langchain/langgraph-checkpoint-sqlite')}, @langchain/core ${pkgVersion('@langchain/core')}, better-sqlite3 ${pkgVersion('better-sqlite3')} (both sides)
- **Bench time:** ${tookS.toFixed(0)} s

| Figure | troupe | Baseline (same run) | Ratio | Target | Result |
| --- | --- | --- | --- | --- | --- |
${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}

Rows marked ⓘ are context, with no target.

## Method

**Overhead per stage** (bench/overhead.js, bench/langgraph-chain.js). One Node process runs both sides.
troupe: a 10-agent linear pipeline (\`a1 → … → a10\`, \`condition: always\` handoffs, the default
context strategy \`both\`, system prompt \`"Step i: {{ input }}"\`) on the scripted runtime with one canned,
zero-latency reply per agent; the store is \`openSqliteStore\` on a file in a temp dir on the local disk
(WAL, synchronous=NORMAL), and every event is committed before the next stage starts (the engine's
behaviour, measured as is). Each run is a new task in the same store: \`TaskService.start\` then
\`await TaskService.continue(id)\`; the figure is the wall time of \`continue\` ÷ 10 (the task's
creation, one more commit, is in the ⓘ row). LangGraph: a \`StateGraph\` of 10 nodes in a chain
(\`START → n1 → … → n10 → END\`), each returning the same canned string appended to a list in the state,
compiled with a \`SqliteSaver\` on a file in a temp dir, invoked with a new \`thread_id\` each run; the
figure is the wall time of \`invoke\` ÷ 10. The target baseline uses \`durability: "sync"\` (each checkpoint
saved before the next node, as troupe does) and synchronous=NORMAL on the saver's connection (as troupe's
store), so both sides promise the same durability; the ⓘ row shows LangGraph's defaults (\`durability: "async"\`,
and a connection that switched a new file to WAL keeps SQLite's synchronous=FULL). ${o.warmup} warm-up runs per
side, then ${o.runs} runs per side, interleaved (the order rotates each round); medians. The raw-commit
baseline is one ~100-byte event row inserted in its own transaction (WAL, NORMAL) on the same disk, the
median of 3,000, so the per-stage figure can also be read in commits.

**Startup** (bench/startup.js). \`node bin/troupe.js --version\` and \`node bin/troupe.js validate -f <10-agent
pipeline>\` (run in a temp project), each spawned synchronously from this process and timed from spawn to
exit; the baseline \`node -e 0\` is spawned the same way. ${s.runs} interleaved runs each after warm-up; medians.

**Memory** (bench/memory.js, bench/rss-probe.js, bench/memory-child.js). \`node bin/troupe.js run -f
<pipeline> --script <script> bench\` in a temp project (\`.troupe/config.yaml\`: \`pipeline.max_stages: 1000\`),
in child processes, for: a 200-agent linear pipeline (the shape above, 200 stages), and a two-agent loop
(\`worker → checker\` always, \`checker → worker\` on \`more == true\`; the script's checker says \`more: true\`
until the last round) run for 50 and for 200 stages, so that only the number of stages changes, not the
pipeline. Peak RSS is \`process.resourceUsage().maxRSS\` read at exit by a preloaded probe
(\`--import bench/rss-probe.js\`); the baseline is \`node -e 0\` with the same probe. Each task is checked
to have completed all its stages. ${m.runs} runs each; medians. "Memory does not grow with the stages already
run" is taken as: the 200-stage loop peaks at most 10% above the 50-stage loop. The ⓘ rows: the same loop run
for 800 stages by the CLI; and one 800-stage loop task run through the API (\`node --expose-gc
bench/memory-child.js 800\`), reading \`process.memoryUsage()\` and the clock after every stage and the heap
after a full GC at stages 200 and 800 (a task's state legitimately grows with its stages: their outputs and
the context file), and the time a stage takes late in the task against early in it (forced GCs left out).

**Where the time goes.** \`node bench/breakdown.js\` (not part of this run) repeats the troupe side of the
overhead benchmark with the task's files (context.md, agent_*.md) not written, and then also with the store
in memory, to split the per-stage time between the engine, SQLite and the file projections.
`;
// other benchmarks (bench/bus.js, bench/runtimes.js, bench/worktrees.js, bench/plan-graph.js) keep their own marked
// sections of the same file: carry them over
const previous = (() => {
  try {
    return readFileSync(DOC, 'utf8');
  } catch {
    return '';
  }
})();
const sections = previous.match(/<!-- ([\w-]+):start -->[\s\S]*?<!-- \1:end -->/g) ?? [];
writeFileSync(DOC, sections.length ? `${md.trimEnd()}\n\n${sections.join('\n\n')}\n` : md);

if (strict && rows.some((r) => r[5] === 'FAIL')) process.exitCode = 1;
