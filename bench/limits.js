// Rate limits, fallbacks and routing (issue #6), run for real through the built CLI on the
// scripted runtime: `node bench/limits.js` after `npm run build`. Updates its own section of
// docs/benchmarks.md (between the limits:start / limits:end markers) and leaves the rest alone.
// Options: --quick (fewer runs), --no-write (print only), --only resume|throughput|routing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import { median, nowMs, quantile, tempDir } from './lib.js';

const quick = process.argv.includes('--quick');
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
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
  if (r.exitCode !== 0) throw new Error(`troupe ${args.join(' ')}: exit ${r.exitCode}\n${r.stdout}\n${r.stderr}`);
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
  for (let i = 0; i < runs; i++) await troupe(fg, ['run', `task ${i}`, '--file', 'p.yaml', '--script', 's.yaml']);
  const foreground = resumeDelays(events(fg));

  // batch: 40 one-stage tasks, 8 at a time; each is limited on its first call, and the others
  // that need the provider meanwhile wait on the same closed window
  const bg = project('resume-batch', {
    'p.yaml': 'agents:\n  - id: worker\n    runtime: claude\n    system_prompt: "Do: {{ input }}"\n',
    's.yaml': `agents:\n  worker: [{error: rate_limit, reset_after_s: ${RESET_S}}, {reply: "done", delay_ms: 50}]\n`,
    'tasks.json': JSON.stringify(Array.from({ length: 40 }, (_, i) => ({ id: `t${i}`, input: `task ${i}` }))),
  });
  await troupe(bg, ['run', '--from', 'tasks.json', '--concurrency', '8', '--file', 'p.yaml', '--script', 's.yaml']);
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
    script.push(`  p${i}: [{error: rate_limit, reset_after_s: ${PHASE_S}}, {reply: "used", delay_ms: ${PHASE_S * 1000}}]`);
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
    pacer = execa(process.execPath, [BIN, 'run', 'pace', '--file', 'pacer.yaml', '--script', 'pacer-script.yaml'], {
      cwd: dir,
      reject: false,
      stdin: 'ignore',
    });
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
/** Tokens a stage uses, by task size, whichever model runs it. */
const TOKENS = {
  S: { input_tokens: 8000, output_tokens: 800 },
  M: { input_tokens: 20000, output_tokens: 2000 },
  L: { input_tokens: 50000, output_tokens: 5000 },
};
const WORD = { S: 'small', M: 'medium', L: 'large' };
/** 16 S, 12 M and 12 L tasks, interleaved. */
const SIZES = Array.from({ length: 4 }, () => ['S', 'M', 'L', 'S', 'M', 'S', 'L', 'M', 'S', 'L']).flat();

/**
 * A gated coder with `model: auto`. On the fast tier (flash) its work on large tasks is
 * incomplete and the gate rejects it; everything else is approved.
 */
function routingProject(prefix) {
  const usage = (size) => `{input_tokens: ${TOKENS[size].input_tokens}, output_tokens: ${TOKENS[size].output_tokens}}`;
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

async function routingRun(prefix, flags) {
  const dir = routingProject(prefix);
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
  const deep = await routingRun('route-deep', ['--tier', 'deep']);
  const learned = await routingRun('route-learn', []);
  return { deep, learned };
}

// ---------------------------------------------------------------------------------------------

const began = nowMs();
const results = {};
if (!only || only === 'resume') {
  settle();
  log('limits: resume latency after a window reopens (foreground and batch)');
  results.resume = await measureResume();
  const stat = (d) =>
    `n=${d.length} p50 ${median(d).toFixed(0)} ms, p95 ${quantile(d, 0.95).toFixed(0)} ms, max ${Math.max(...d).toFixed(0)} ms, min ${Math.min(...d).toFixed(0)}`;
  log(`  foreground: ${stat(results.resume.foreground)}`);
  log(`  batch: ${stat(results.resume.batch)}`);
}
if (!only || only === 'throughput') {
  settle();
  log('limits: throughput with and without a fallback');
  results.throughput = await measureThroughput();
  log(JSON.stringify(results.throughput));
}
if (!only || only === 'routing') {
  settle();
  log('limits: routing by history vs the deep tier');
  results.routing = await measureRouting();
  log(JSON.stringify(results.routing));
}
const tookS = (nowMs() - began) / 1000;
log(`${tookS.toFixed(0)} s`);
void cpus;
void release;
void totalmem;
void existsSync;
void readFileSync;
