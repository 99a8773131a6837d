// Rate limits, fallbacks and routing (issue #6), run for real through the built CLI on the
// scripted runtime: `node bench/limits.js` after `npm run build`. Updates its own section of
// docs/benchmarks.md (between the limits:start / limits:end markers) and leaves the rest alone.
// Options: --quick (fewer runs), --no-write (print only).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { DEFAULT_PRICES } from '../dist/scheduler/prices.js';
import { median, nowMs, quantile, tempDir } from './lib.js';

const quick = process.argv.includes('--quick');
const DOC = fileURLToPath(new URL('../docs/benchmarks.md', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/troupe.js', import.meta.url));
const log = (line) => process.stderr.write(`${line}\n`);

function settle() {
  spawnSync('sync', { stdio: 'ignore' });
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, quick ? 200 : 2000);
}

/** A throwaway project holding the given files (paths relative to it). */
function project(prefix, files) {
  const dir = tempDir(`limits-${prefix}`);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

/** Runs the built CLI in `dir`; fails loudly unless it exits 0. Returns stdout and the wall time. */
async function troupe(dir, args) {
  const t0 = nowMs();
  const r = await execa(process.execPath, [BIN, ...args], {
    cwd: dir,
    reject: false,
    stdin: 'ignore',
    env: { NO_COLOR: '1' },
  });
  const ms = nowMs() - t0;
  if (r.exitCode !== 0)
    throw new Error(`troupe ${args.join(' ')}: exit ${r.exitCode}\n${r.stdout}\n${r.stderr}`);
  return { stdout: r.stdout, ms };
}

/** Every event of the project, in order, with its data parsed and its time in ms. */
function events(dir) {
  const db = new Database(join(dir, '.troupe', 'troupe.db'), { readonly: true });
  try {
    return db
      .prepare('SELECT seq, task_id AS task, type, at, data FROM events ORDER BY seq')
      .all()
      .map((e) => ({ ...e, at: Date.parse(e.at), data: JSON.parse(e.data) }));
  } finally {
    db.close();
  }
}

/**
 * For every wait on a closed window (`rate_limited` with a reset still ahead), the delay from the
 * reset to the moment the stage ran again: its next `stage_started`, or its next `rate_limited`
 * when it woke to find the window closed again (then that is a new wait).
 */
function resumeDelays(all) {
  const delays = [];
  for (const [i, wait] of all.entries()) {
    if (wait.type !== 'rate_limited') continue;
    const reset = Date.parse(wait.data.resetAt);
    if (reset <= wait.at) continue; // not a wait: the stage moved to a fallback at once
    const next = all
      .slice(i + 1)
      .find(
        (e) =>
          e.task === wait.task &&
          (e.type === 'stage_started' || e.type === 'rate_limited') &&
          e.data.stage === wait.data.stage,
      );
    if (!next) throw new Error(`task ${wait.task} never ran stage ${wait.data.stage} again`);
    delays.push(next.at - reset);
  }
  return delays;
}

// ---------------------------------------------------------------------------------------------
// 1. Resume latency after a window reopens

const RESET_S = 0.5;

/** n agents in a line, each limited on its first call (reset in RESET_S), then replying. */
function limitedLine(n) {
  const agents = ['agents:'];
  const script = ['agents:'];
  for (let i = 1; i <= n; i++) {
    agents.push(`  - id: a${i}`, '    runtime: claude', `    system_prompt: "Step ${i}: {{ input }}"`);
    if (i < n) agents.push('    handoffs:', `      - to: a${i + 1}`, '        condition: always');
    script.push(`  a${i}: [{error: rate_limit, reset_after_s: ${RESET_S}}, "step ${i} done"]`);
  }
  return { 'p.yaml': `${agents.join('\n')}\n`, 's.yaml': `${script.join('\n')}\n` };
}

async function measureResume() {
  const runs = quick ? 2 : 4;
  // foreground: `troupe run`, one task of 10 stages, each waiting once
  const fg = project('resume-fg', limitedLine(10));
  for (let i = 0; i < runs; i++)
    await troupe(fg, ['run', `task ${i}`, '--file', 'p.yaml', '--script', 's.yaml']);
  const foreground = resumeDelays(events(fg));

  // batch: 40 one-stage tasks, 8 at a time; each is limited on its first call, and the others
  // that need the provider meanwhile wait on the same closed window
  const bg = project('resume-batch', {
    'p.yaml': 'agents:\n  - id: worker\n    runtime: claude\n    system_prompt: "Do: {{ input }}"\n',
    's.yaml': `agents:\n  worker: [{error: rate_limit, reset_after_s: ${RESET_S}}, {reply: "done", delay_ms: 50}]\n`,
    'tasks.json': JSON.stringify(Array.from({ length: 40 }, (_, i) => ({ id: `t${i}`, input: `task ${i}` }))),
  });
  await troupe(bg, [
    'run',
    '--from',
    'tasks.json',
    '--concurrency',
    '8',
    '--file',
    'p.yaml',
    '--script',
    's.yaml',
  ]);
  const batch = resumeDelays(events(bg));
  return { foreground, batch };
}

// ---------------------------------------------------------------------------------------------
// 2. Throughput under limits: the same workload with and without a fallback provider

const TASKS = 40;
const CONCURRENCY = 8;
const CALL_MS = 1000;
const PHASE_S = 2;

/**
 * Another user of the same claude account, as a second troupe process in the same project: its
 * agents each meet a limit (claude closed for PHASE_S), wait for the reset, then make a call that
 * takes PHASE_S, and so on: claude is closed about half the time, whoever else uses it.
 */
const PACER = (() => {
  const agents = ['agents:'];
  const script = ['agents:'];
  for (let i = 1; i <= 15; i++) {
    agents.push(`  - id: p${i}`, '    runtime: claude', '    system_prompt: "busy {{ input }}"');
    if (i < 15) agents.push(`    handoffs: [{to: p${i + 1}}]`);
    script.push(
      `  p${i}: [{error: rate_limit, reset_after_s: ${PHASE_S}}, {reply: "used", delay_ms: ${PHASE_S * 1000}}]`,
    );
  }
  return { 'pacer.yaml': `${agents.join('\n')}\n`, 'pacer-script.yaml': `${script.join('\n')}\n` };
})();

/**
 * 40 one-stage tasks on claude (model sonnet), with or without a gemini fallback; every reply,
 * on either provider, takes CALL_MS. The fallback's calls match the `model: flash` entry.
 */
function throughputProject(prefix, withFallback) {
  const agent = [
    'agents:',
    '  - id: worker',
    '    runtime: claude',
    '    model: sonnet',
    '    system_prompt: "Do: {{ input }}"',
    ...(withFallback ? ['    fallback: [{runtime: gemini, model: gemini-2.5-flash}]'] : []),
  ];
  const script = [
    'agents:',
    '  worker:',
    `    - {model: flash, reply: "done on the fallback", delay_ms: ${CALL_MS}}`,
    `    - {reply: "done", delay_ms: ${CALL_MS}}`,
  ];
  const tasks = Array.from({ length: TASKS }, (_, i) => ({ id: `t${i}`, input: `task ${i}` }));
  return project(prefix, {
    'p.yaml': `${agent.join('\n')}\n`,
    's.yaml': `${script.join('\n')}\n`,
    'tasks.json': JSON.stringify(tasks),
    ...PACER,
  });
}

/** Waits until `check` returns something (polling the store every 20 ms). */
async function until(check, ms = 10_000) {
  const end = Date.now() + ms;
  for (;;) {
    let value;
    try {
      value = check();
    } catch {
      // the store is not created yet
    }
    if (value) return value;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Runs the batch, with the pacer limiting claude (unless `limited` is false), started once the
 * pacer has closed the window for the first time so every run begins at the same point of the
 * pattern. Returns the batch's wall time and what the event log says happened.
 */
async function throughputRun(dir, limited) {
  let pacer = null;
  if (limited) {
    pacer = execa(
      process.execPath,
      [BIN, 'run', 'pace', '--file', 'pacer.yaml', '--script', 'pacer-script.yaml'],
      {
        cwd: dir,
        reject: false,
        stdin: 'ignore',
      },
    );
    await until(() => events(dir).some((e) => e.type === 'rate_limited'));
  }
  const args = ['run', '--from', 'tasks.json', '--concurrency', String(CONCURRENCY), '--file', 'p.yaml'];
  const { ms } = await troupe(dir, [...args, '--script', 's.yaml']);
  pacer?.kill('SIGKILL');
  await pacer;
  const all = events(dir);
  const pace = all[0].task;
  const work = all.filter((e) => e.task !== pace || !limited);
  const completed = work.filter((e) => e.type === 'task_completed').length;
  if (completed !== TASKS) throw new Error(`${dir}: ${completed} of ${TASKS} tasks completed`);
  // how much of the batch's time claude was closed: each of the pacer's limits closes it for PHASE_S
  const [start, end] = [Math.min(...work.map((e) => e.at)), Math.max(...work.map((e) => e.at))];
  const closedMs = all
    .filter((e) => e.task === pace && limited && e.type === 'rate_limited')
    .map((e) => [Math.max(e.at, start), Math.min(e.at + PHASE_S * 1000, end)])
    .reduce((sum, [a, b]) => sum + Math.max(0, b - a), 0);
  return {
    ms,
    closedShare: closedMs / (end - start),
    fallbacks: work.filter((e) => e.type === 'decision' && e.data.kind === 'fallback').length,
    waits: work.filter((e) => e.type === 'rate_limited').length,
  };
}

async function measureThroughput() {
  const rounds = quick ? 1 : 2;
  const runs = { fallback: [], waiting: [], unlimited: [] };
  for (let i = 0; i < rounds; i++) {
    // alternate the order, so neither side always runs on a warmer machine
    const order = i % 2 ? ['waiting', 'fallback', 'unlimited'] : ['fallback', 'waiting', 'unlimited'];
    for (const side of order) {
      const dir = throughputProject(`tp-${side}`, side === 'fallback');
      runs[side].push(await throughputRun(dir, side !== 'unlimited'));
      log(`  ${side}: ${JSON.stringify(runs[side].at(-1))}`);
    }
  }
  const med = (side, key) => median(runs[side].map((r) => r[key]));
  return Object.fromEntries(
    Object.keys(runs).map((side) => [
      side,
      {
        ms: med(side, 'ms'),
        closedShare: med(side, 'closedShare'),
        fallbacks: med(side, 'fallbacks'),
        waits: med(side, 'waits'),
      },
    ]),
  );
}

// ---------------------------------------------------------------------------------------------
// 3. Routing by history against always using the deep tier

const ROUTING_CONFIG = [
  'routing:',
  '  tiers:',
  '    fast: {runtime: gemini, model: gemini-2.5-flash}',
  '    deep: {runtime: claude, model: opus}',
  '  learn: true',
  '',
].join('\n');
/** Tokens a stage uses, by task size, whichever model runs it: bigger work reads and writes more. */
const TOKENS = {
  S: { input_tokens: 8000, output_tokens: 800 },
  M: { input_tokens: 20000, output_tokens: 2000 },
  L: { input_tokens: 50000, output_tokens: 5000 },
};
/** The ⓘ variant: every stage the same tokens, whatever the size. */
const FLAT_TOKENS = { S: TOKENS.M, M: TOKENS.M, L: TOKENS.M };
const WORD = { S: 'small', M: 'medium', L: 'large' };
/** 16 S, 12 M and 12 L tasks, interleaved. */
const SIZES = Array.from({ length: 4 }, () => ['S', 'M', 'L', 'S', 'M', 'S', 'L', 'M', 'S', 'L']).flat();

/**
 * A gated coder with `model: auto`. On the fast tier (flash) its work on large tasks is
 * incomplete and the gate rejects it; everything else is approved.
 */
function routingProject(prefix, tokens) {
  const usage = (size) =>
    `{input_tokens: ${tokens[size].input_tokens}, output_tokens: ${tokens[size].output_tokens}}`;
  const entries = [];
  for (const size of ['S', 'M', 'L']) {
    const quick = size === 'L' ? 'quick fix (incomplete)' : 'quick fix';
    entries.push(`    - {model: flash, when: ${WORD[size]}, reply: "${quick}", usage: ${usage(size)}}`);
    entries.push(`    - {model: opus, when: ${WORD[size]}, reply: "careful fix", usage: ${usage(size)}}`);
  }
  const script = [
    'agents:',
    '  coder:',
    ...entries,
    'gates:',
    '  coder:',
    '    - {when: incomplete, decision: rejected, reason: "half done"}',
    '    - approved',
  ];
  const tasks = SIZES.map((size, i) => ({ id: `t${i}`, input: `${WORD[size]} change ${i}`, size }));
  return project(prefix, {
    '.troupe/config.yaml': ROUTING_CONFIG,
    'p.yaml': [
      'agents:',
      '  - id: coder',
      '    runtime: claude',
      '    model: auto',
      '    system_prompt: "Change the code: {{ input }}"',
      '    gate: {type: llm, prompt: "complete?", max_retries: 3}',
      '',
    ].join('\n'),
    's.yaml': `${script.join('\n')}\n`,
    'tasks.json': JSON.stringify(tasks),
  });
}

async function routingRun(prefix, tokens, flags) {
  const dir = routingProject(prefix, tokens);
  const run = ['run', '--from', 'tasks.json', '--concurrency', '1', '--file', 'p.yaml', '--script', 's.yaml'];
  await troupe(dir, [...run, ...flags]);
  const usage = JSON.parse((await troupe(dir, ['usage', '--by', 'model', '--json'])).stdout);
  const decisions = JSON.parse((await troupe(dir, ['decisions', '--json'])).stdout);
  const tiers = {};
  for (const row of decisions.summary) {
    tiers[row.tier] ??= { stages: 0, approved: 0, rejected: 0 };
    for (const k of ['stages', 'approved', 'rejected']) tiers[row.tier][k] += row[k];
  }
  const all = events(dir);
  // the stages the gate sent back: what learning cost, over the cheapest tier that passes
  const rejectedCost = decisions.decisions
    .filter((d) => d.verdict === 'rejected')
    .reduce((sum, d) => sum + d.costUsd, 0);
  return {
    cost: usage.total.cost_usd,
    rejectedCost,
    stages: usage.total.stages,
    completed: all.filter((e) => e.type === 'task_completed').length,
    failed: all.filter((e) => e.type === 'task_failed').length,
    tiers,
  };
}

async function measureRouting() {
  return {
    deep: await routingRun('route-deep', TOKENS, ['--tier', 'deep']),
    learned: await routingRun('route-learn', TOKENS, []),
    flatDeep: await routingRun('route-flat-deep', FLAT_TOKENS, ['--tier', 'deep']),
    flatLearned: await routingRun('route-flat-learn', FLAT_TOKENS, []),
  };
}

// ---------------------------------------------------------------------------------------------

const began = nowMs();
settle();
log('limits: resume latency after a window reopens (foreground and batch)');
const resume = await measureResume();
settle();
log('limits: throughput with and without a fallback');
const tp = await measureThroughput();
settle();
log('limits: routing by history vs the deep tier');
const rt = await measureRouting();
const tookS = (nowMs() - began) / 1000;

const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
const ms = (x) => `${x.toFixed(0)} ms`;
const s1 = (x) => `${(x / 1000).toFixed(1)} s`;
const usd = (x) => `$${x.toFixed(2)}`;
const pct = (x) => `${Math.round(x * 100)} %`;
const latency = (d) => ({ p50: median(d), p95: quantile(d, 0.95), max: Math.max(...d) });
const fg = latency(resume.foreground);
const bt = latency(resume.batch);
const tpRatio = tp.fallback.ms / tp.waiting.ms;
const saved = 1 - rt.learned.cost / rt.deep.cost;
const flatSaved = 1 - rt.flatLearned.cost / rt.flatDeep.cost;
const tiers = (r) =>
  Object.entries(r.tiers)
    .map(([t, v]) => `${t} ${v.stages} (${v.approved} approved, ${v.rejected} rejected)`)
    .join(', ');
const sameApproved = rt.learned.completed === rt.deep.completed && rt.learned.failed === 0;
const rows = [
  [
    `Resume after a window reopens, \`troupe run\` (${resume.foreground.length} waits): p95 (p50, max)`,
    `${ms(fg.p95)} (${ms(fg.p50)}, ${ms(fg.max)})`,
    `the reset time (${RESET_S} s after the limit)`,
    '—',
    '< 1 s',
    verdict(fg.p95 < 1000),
  ],
  [
    `Resume after a window reopens, \`--from\`, ${CONCURRENCY} at a time (${resume.batch.length} waits): p95 (p50, max)`,
    `${ms(bt.p95)} (${ms(bt.p50)}, ${ms(bt.max)})`,
    'the reset time of the window waited on',
    '—',
    '< 1 s',
    verdict(bt.p95 < 1000),
  ],
  [
    `${TASKS} tasks, claude closed ${pct(tp.waiting.closedShare)} of the time, with a gemini fallback`,
    s1(tp.fallback.ms),
    `same, no fallback (waits for the reset): ${s1(tp.waiting.ms)}`,
    `${tpRatio.toFixed(2)}×`,
    '≤ 0.6×',
    verdict(tpRatio <= 0.6),
  ],
  [
    'ⓘ Same, with a fallback, against no limits at all',
    s1(tp.fallback.ms),
    `no pacer, claude always open: ${s1(tp.unlimited.ms)}`,
    `${(tp.fallback.ms / tp.unlimited.ms).toFixed(2)}×`,
    '—',
    'info',
  ],
  [
    `Routing by history, ${SIZES.length} tasks of mixed sizes: cost`,
    `${usd(rt.learned.cost)}, ${rt.learned.completed} approved`,
    `\`--tier deep\`: ${usd(rt.deep.cost)}, ${rt.deep.completed} approved`,
    `${(rt.learned.cost / rt.deep.cost).toFixed(2)}× (${pct(saved)} less)`,
    '≥ 40 % less, as many approved',
    verdict(saved >= 0.4 && sameApproved),
  ],
  ['ⓘ Same: stages a tier ran', tiers(rt.learned), tiers(rt.deep), '—', '—', 'info'],
  [
    'ⓘ Same: what learning cost (the stages the gate rejected)',
    usd(rt.learned.rejectedCost),
    `the cheapest tier that passes, known in advance: ${usd(rt.learned.cost - rt.learned.rejectedCost)}`,
    `${(rt.learned.cost / (rt.learned.cost - rt.learned.rejectedCost)).toFixed(3)}×`,
    '—',
    'info',
  ],
  [
    "ⓘ Same workload, every stage the same tokens (M's)",
    `${usd(rt.flatLearned.cost)}, ${rt.flatLearned.completed} approved`,
    `\`--tier deep\`: ${usd(rt.flatDeep.cost)}, ${rt.flatDeep.completed} approved`,
    `${(rt.flatLearned.cost / rt.flatDeep.cost).toFixed(2)}× (${pct(flatSaved)} less)`,
    '—',
    'info',
  ],
];
const table = [
  '| Figure | troupe | Baseline (same run) | Ratio | Target | Result |',
  '| --- | --- | --- | --- | --- | --- |',
  ...rows.map((r) => `| ${r.join(' | ')} |`),
].join('\n');
// what the L tasks cost on opus, which they need whatever the routing: the most routing can save
const opus = DEFAULT_PRICES.opus;
const largeOnOpus =
  (SIZES.filter((size) => size === 'L').length *
    (TOKENS.L.input_tokens * opus.input + TOKENS.L.output_tokens * opus.output)) /
  1e6;
const bigShare = largeOnOpus / rt.deep.cost;

const section = `<!-- limits:start -->
## Rate limits, fallbacks and routing

Written by \`node bench/limits.js\` (after \`npm run build\`); do not edit by hand. ${quick ? '**Quick run (fewer samples).** ' : ''}

- **Date:** ${new Date().toISOString().slice(0, 19)}Z
- **Machine:** Node ${process.version}, ${cpus()[0]?.model.trim() ?? '?'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}
- **Bench time:** ${Math.round(tookS)} s

${table}

**Method** (bench/limits.js). Everything runs through the built CLI (\`node bin/troupe.js\`) on the
scripted runtime, each run in a fresh project; figures come from the project's event log
(\`.troupe/troupe.db\`), \`troupe usage --json\` and \`troupe decisions --json\`.
*Resume*: a wait is a \`rate_limited\` event whose reset is still ahead; its delay is from that reset to
the stage's next \`stage_started\` (or its next \`rate_limited\`, when it woke to find the window closed
again by another task — that is a new wait). Foreground: ${quick ? 2 : 4} runs of \`troupe run\` on a
10-agent line whose every agent is limited on its first call (\`reset_after_s: ${RESET_S}\`), 10 waits a run.
Batch: \`troupe run --from tasks.json --concurrency ${CONCURRENCY}\`, 40 one-stage tasks, each limited on its
first call; the others running meanwhile find the window closed and wait on it too, so most waits are
shared and many tasks wake at the same reset. Event times have millisecond resolution.
*Throughput*: ${TASKS} one-stage tasks on claude (\`model: sonnet\`), ${CONCURRENCY} at a time, every reply taking
${CALL_MS} ms on either provider; the two sides differ only in \`fallback: [{runtime: gemini, model:
gemini-2.5-flash}]\`. The limit comes from a second \`troupe run\` in the same project (another user of the
account): a 15-agent line whose agents each meet a limit (\`reset_after_s: ${PHASE_S}\`), wait, then make a
${PHASE_S} s call, so claude's window is closed about half the time (the share given is measured over the
batch from that task's \`rate_limited\` events). Each batch starts once that task has closed the window
the first time, so both sides begin at the same point of the pattern. Without a fallback a task that finds
claude closed waits for the reset; with one it runs on gemini at once (${tp.fallback.fallbacks} of ${TASKS} did).
Wall time of the batch command; ${quick ? 1 : 2} rounds, order alternated, medians.
*Routing*: one gated agent (\`model: auto\`; \`routing:\` tiers \`fast\` = gemini-2.5-flash then \`deep\` = opus,
\`learn: true\` with its defaults: 3 outcomes before a record counts, exploration on), ${SIZES.length} tasks run one
at a time with \`size\` in tasks.json: 16 S, 12 M, 12 L, interleaved. On flash the agent's work on L
tasks is incomplete and the gate (a \`when\` entry on the output) rejects it; everything else is approved.
Tokens per stage grow with the size (S 8k in / 0.8k out, M 20k / 2k, L 50k / 5k) and are the same on
either model; cost from the default price table. The baseline is the same batch with \`--tier deep\`.
**The bound:** the L tasks must run on opus in either case, and they are
${pct(bigShare)} of the deep-only cost, so no routing could save more than ${pct(1 - bigShare)} on this workload; the
policy got within ${pct(rt.learned.rejectedCost / rt.learned.cost)} of that (its whole exploration: ${rt.learned.tiers.fast?.rejected ?? 0} flash
stages on L tasks before flash was avoided for them). With the same tokens for every stage (ⓘ row) small
work is a larger share of the bill and the saving is ${pct(flatSaved)}.
<!-- limits:end -->`;

process.stdout.write(`${table}\n`);
if (!process.argv.includes('--no-write')) {
  const old = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '# Benchmarks\n';
  const re = /<!-- limits:start -->[\s\S]*?<!-- limits:end -->/;
  const next = re.test(old) ? old.replace(re, section) : `${old.replace(/\n*$/, '\n\n')}${section}\n`;
  writeFileSync(DOC, next);
  log(`updated ${DOC}`);
}
