// `troupe worker` processes on PostgreSQL (store and queue in one database of the bench's own on
// 127.0.0.1:5432, dropped at the end, even on failure): how the throughput of zero-latency scripted
// stages grows with 1, 2 and 4 workers, how long a task that is ready waits before a worker starts
// it, and what an idle worker costs. Writes only its own section of docs/benchmarks.md.
// `npm run build` first; --quick for a fast check of the bench itself.
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fmtMs, fmtRatio, makeProject, median, nowMs, quantile, writeDocSection } from './lib.js';
import { benchDatabase, cpuMs, startWorker, stopWorker } from './pg-workers.js';

const quick = process.argv.includes('--quick');
// the machine is shared: how busy it was is part of the figures
const load = loadavg();
const began = nowMs();
const log = (line) => process.stderr.write(`${line}\n`);
const dist = (path) => import(new URL(`../dist/${path}`, import.meta.url).href);

const STAGES = 5;
const TASKS = quick ? 40 : 160;
const ROUNDS = quick ? 1 : 3;
const SAMPLES = quick ? 25 : 100;
const IDLE_MS = quick ? 2000 : 5000;
/** The queue's idle polling period when TROUPE_QUEUE_POLL_MS is not set (src/store/queue/pg-boss-queue.ts). */
const DEFAULT_POLL_MS = 500;
// which client the workers' store uses (docs/distributed.md, "The client: libpq or the bridge")
const pgClient =
  process.env.TROUPE_PG_CLIENT ||
  ((await dist('store/postgres/native-pg.js')).loadLibpq() ? 'native' : 'bridge');
const FAST_POLL_MS = 50;
/**
 * The throughput runs: worker processes × `--concurrency` each, serving claude only (two lanes and
 * the check lane) unless `allRuntimes` (the default: eight lanes, polled in turn for a free slot).
 * The first three are the curve; the others are the defaults, against the first.
 */
const SETUPS = [
  { workers: 1, concurrency: 1, label: 'Throughput, 1 worker × `--concurrency 1`' },
  { workers: 2, concurrency: 1, label: 'Throughput, 2 workers × `--concurrency 1`' },
  { workers: 4, concurrency: 1, label: 'Throughput, 4 workers × `--concurrency 1`' },
  { workers: 1, concurrency: 2, label: 'ⓘ Throughput, 1 worker × `--concurrency 2` (the default)' },
  {
    workers: 1,
    concurrency: 1,
    allRuntimes: true,
    label: 'ⓘ Throughput, 1 worker × `--concurrency 1`, every runtime (the default `--runtimes`)',
  },
];
const key = (s) => `${s.workers}x${s.concurrency}${s.allRuntimes ? '-all' : ''}`;

const [{ openProject }, { openQueue }, { enqueueWakeUps }, { loadPipeline }] = await Promise.all([
  dist('app/project.js'),
  dist('app/queue-config.js'),
  dist('app/worker.js'),
  dist('pipeline/load.js'),
]);

const db = await benchDatabase(`troupe_bench_${process.pid}`);
// the store and the queue in the bench's database, for the workers and for this process
const env = { TROUPE_STORE: db.url, TROUPE_QUEUE: '' };
Object.assign(process.env, env);
delete process.env.TROUPE_QUEUE_POLL_MS;

const linear = makeProject('workers', STAGES);
// the handoff: writer on a claude-only worker, editor on a codex-only one
const handoffFile = join(linear.root, '.troupe', 'pipelines', 'handoff.yaml');
writeFileSync(
  handoffFile,
  'agents:\n  - id: writer\n    runtime: claude\n    handoffs: [{to: editor}]\n  - id: editor\n    runtime: codex\n',
);
/**
 * The writer replies after a random pause up to one polling period, so that its stage ends anywhere
 * in B's polling: A and B poll with the same period, and without it every handoff would land at
 * about the same phase of B's.
 */
const handoffScript = (pollMs) => ({
  agents: { writer: [{ reply: 'draft', delay_ms: Math.round(Math.random() * pollMs) }], editor: ['edited'] },
  gates: {},
  human: {},
});

const live = new Set();
/** The workers of the run in progress, for their stderr should it fail (they may have exited already). */
let current = [];
let project = null;
let queue = null;
let cleaned = null;
let interrupted = false;
/** Stops every worker still running, closes this process's store and queue, drops the database. */
function cleanup() {
  cleaned ??= (async () => {
    await Promise.all([...live].map((w) => stopWorker(w)));
    await queue?.close().catch(() => {});
    project?.store.close();
    await db.drop();
  })();
  return cleaned;
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    interrupted = true;
    log(`${signal}: stopping the workers, dropping the database`);
    cleanup().finally(() => process.exit(130));
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function startWorkers(count, { concurrency, runtimes, pollMs }) {
  const args = ['--concurrency', String(concurrency), ...(runtimes ? ['--runtimes', runtimes] : [])];
  const withPoll = pollMs ? { ...env, TROUPE_QUEUE_POLL_MS: String(pollMs) } : env;
  return Promise.all(
    Array.from({ length: count }, async () => {
      const worker = await startWorker(linear.root, args, withPoll, live);
      current.push(worker);
      return worker;
    }),
  );
}

/** SIGTERM to each; a worker that does not exit 0 is a failure of the run. */
async function stopAll(workers) {
  const exits = await Promise.all(workers.map((w) => stopWorker(w)));
  const bad = exits.flatMap((e, i) => (e.code === 0 ? [] : [`${workers[i].pid}: ${e.signal ?? e.code}`]));
  if (bad.length) throw new Error(`workers did not stop cleanly: ${bad.join(', ')}`);
}

/** The tasks' events, oldest first, with `data` parsed and `at` in ms. */
async function eventsOf(ids) {
  const rows = await db.query(
    'SELECT task_id, type, at, data FROM events WHERE task_id = ANY($1) ORDER BY seq',
    [ids],
  );
  return rows.map((r) => ({ task: r.task_id, type: r.type, at: Date.parse(r.at), data: JSON.parse(r.data) }));
}

async function waitEnded(ids, timeoutMs, pollMs) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const [{ n }] = await db.query(
      "SELECT count(*)::int AS n FROM events WHERE type IN ('task_completed', 'task_failed') AND task_id = ANY($1)",
      [ids],
    );
    if (n >= ids.length) return;
    if (Date.now() > end)
      throw new Error(`${ids.length - n} of ${ids.length} tasks not ended in ${timeoutMs} ms`);
    await sleep(pollMs);
  }
}

/** Each task completed, each of its stages exactly once. */
function checkCompleted(events, ids, stages) {
  for (const id of ids) {
    const mine = events.filter((e) => e.task === id);
    const done = mine.filter((e) => e.type === 'stage_completed').map((e) => e.data.stage);
    if (
      !mine.some((e) => e.type === 'task_completed') ||
      done.length !== stages ||
      new Set(done).size !== stages
    )
      throw new Error(`${id}: ${mine.map((e) => e.type).join(', ')}`);
  }
}

/**
 * One throughput run: TASKS tasks made while no worker runs, the workers started and ready, then
 * all the wake-ups sent at once. Stages completed ÷ (last task_completed − first stage_started);
 * and the steady rate, between the 10th and the 90th percentile of the completions (without the
 * workers' first poll and the last tasks' tail).
 */
async function throughputRun(setup, pipeline) {
  current = [];
  const ids = Array.from({ length: TASKS }, (_, i) =>
    project.tasks.start({ pipeline, input: `task ${i}`, script: linear.script, cwd: linear.root }),
  );
  const states = ids.map((id) => project.tasks.state(id));
  const workers = await startWorkers(setup.workers, {
    concurrency: setup.concurrency,
    runtimes: setup.allRuntimes ? null : 'claude',
  });
  const cpuBefore = await cpuNow(workers);
  // all at once: pg-boss's pool (4 connections) sends them as fast as the database takes them
  await Promise.all(states.map((state) => enqueueWakeUps(queue, state)));
  await waitEnded(ids, 180_000, 50);
  const cpu = cpuSpent(cpuBefore, await cpuNow(workers));
  await stopAll(workers);
  const events = await eventsOf(ids);
  checkCompleted(events, ids, STAGES);
  const first = Math.min(...events.filter((e) => e.type === 'stage_started').map((e) => e.at));
  const last = Math.max(...events.filter((e) => e.type === 'task_completed').map((e) => e.at));
  const done = events.filter((e) => e.type === 'stage_completed').map((e) => e.at);
  done.sort((a, b) => a - b);
  const [p10, p90] = [Math.floor(done.length * 0.1), Math.floor(done.length * 0.9)];
  return {
    perS: done.length / ((last - first) / 1000),
    steadyPerS: (p90 - p10) / ((done[p90] - done[p10]) / 1000),
    workerCpuMs: cpu.workers / done.length,
    dbCpuMs: cpu.db / done.length,
  };
}

/** The pg-boss jobs of these tasks (created_on: sent; started_on: fetched by a worker), by task and lane. */
async function jobsOf(ids) {
  const rows = await db.query(
    `SELECT name, data->>'taskId' AS task, created_on, started_on FROM pgboss.job
      WHERE name IN ('troupe-claude', 'troupe-codex') AND data->>'taskId' = ANY($1)`,
    [ids],
  );
  return new Map(rows.map((r) => [`${r.task} ${r.name}`, r]));
}

/**
 * Pickup: tasks of the handoff pipeline sent one at a time, each once the previous ended and after
 * a random pause up to one polling period (so that the sends fall anywhere in A's polling), to a
 * claude-only worker A and a codex-only worker B.
 */
async function pickupRun(pipeline, pollMs) {
  current = [];
  const options = { concurrency: 1, pollMs: pollMs === DEFAULT_POLL_MS ? null : pollMs };
  const [a] = await startWorkers(1, { ...options, runtimes: 'claude' });
  const [b] = await startWorkers(1, { ...options, runtimes: 'codex' });
  const ids = [];
  for (let i = 0; i < SAMPLES; i++) {
    await sleep(Math.random() * pollMs);
    const script = handoffScript(pollMs);
    const id = project.tasks.start({ pipeline, input: `pickup ${i}`, script, cwd: linear.root });
    await enqueueWakeUps(queue, project.tasks.state(id));
    ids.push(id);
    await waitEnded([id], 30_000, 10);
  }
  await stopAll([a, b]);
  const events = await eventsOf(ids);
  checkCompleted(events, ids, 2);
  const jobs = await jobsOf(ids);
  const fresh = { total: [], send: [], wait: [], start: [] };
  const handoff = { total: [], send: [], wait: [], start: [] };
  for (const id of ids) {
    const mine = events.filter((e) => e.task === id);
    const at = (type, stage) =>
      mine.find((e) => e.type === type && (stage === undefined || e.data.stage === stage)).at;
    // stage 1 can only run on A (the one claude worker); stage 2 must have run in a second run, on B
    const resumed = mine.filter((e) => e.type === 'task_resumed').map((e) => e.data.pid);
    if (resumed.length !== 1 || resumed[0] !== b.pid) throw new Error(`${id}: resumed by ${resumed}`);
    split(fresh, at('task_created'), jobs.get(`${id} troupe-claude`), at('stage_started', 1));
    split(handoff, at('stage_completed', 1), jobs.get(`${id} troupe-codex`), at('stage_started', 2));
  }
  return { fresh, handoff };
}

/** ready → job sent (pg-boss created_on) → job fetched (started_on) → stage_started. */
function split(into, readyAt, job, startedAt) {
  const sent = job.created_on.getTime();
  const fetched = job.started_on.getTime();
  into.total.push(startedAt - readyAt);
  into.send.push(sent - readyAt);
  into.wait.push(fetched - sent);
  into.start.push(startedAt - fetched);
}

/**
 * What one idle worker with the defaults (every runtime, so 8 lanes and the check lane) costs over
 * IDLE_MS: its own CPU, and that of the database's backends (its connections; this process's are idle).
 */
async function idleCost(pollMs) {
  current = [];
  const [worker] = await startWorkers(1, {
    concurrency: 2,
    pollMs: pollMs === DEFAULT_POLL_MS ? null : pollMs,
  });
  await sleep(1000);
  const before = await cpuNow([worker]);
  const t0 = nowMs();
  await sleep(IDLE_MS);
  const cpu = cpuSpent(before, await cpuNow([worker]));
  const ms = nowMs() - t0;
  await stopAll([worker]);
  return { workerPct: (100 * cpu.workers) / ms, dbPct: (100 * cpu.db) / ms };
}

/**
 * CPU used so far (ms, from /proc) by the workers and by the database's backends (the workers'
 * connections and this process's, which only wait or read a count meanwhile).
 */
async function cpuNow(workers) {
  const rows = await db.query('SELECT pid FROM pg_stat_activity WHERE datname = current_database()');
  return {
    workers: workers.map((w) => cpuMs(w.pid)),
    backends: new Map(rows.map((r) => [r.pid, safeCpuMs(r.pid) ?? 0])),
  };
}

/** Between two cpuNow: a backend that connected meanwhile counts from zero, one that left is lost. */
function cpuSpent(before, after) {
  let db = 0;
  for (const [pid, ms] of after.backends) db += ms - (before.backends.get(pid) ?? 0);
  return { workers: after.workers.reduce((sum, ms, i) => sum + ms - before.workers[i], 0), db };
}

function safeCpuMs(pid) {
  try {
    return cpuMs(pid);
  } catch {
    return null; // the backend ended meanwhile
  }
}

let section;
try {
  project = openProject(linear.root);
  queue = await openQueue(project, { needed: 'bench/workers.js' });
  const pipeline = loadPipeline(linear.pipelineFile, { params: {}, name: 'bench' });
  const handoff = loadPipeline(handoffFile, { params: {}, name: 'handoff' });

  const runs = Object.fromEntries(SETUPS.map((s) => [key(s), []]));
  log(
    `  throughput: ${TASKS} tasks × ${STAGES} stages a run, ${ROUNDS} round(s) of ${SETUPS.map(key).join(', ')}`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < SETUPS.length; k++) {
      // rotate the order so no setup always runs first
      const setup = SETUPS[(round + k) % SETUPS.length];
      const r = await throughputRun(setup, pipeline);
      runs[key(setup)].push(r);
      log(`    ${key(setup)}: ${r.perS.toFixed(1)} stages/s (steady ${r.steadyPerS.toFixed(1)})`);
    }
  }
  const pickup = {};
  const idle = {};
  for (const pollMs of [DEFAULT_POLL_MS, FAST_POLL_MS]) {
    log(`  pickup, polling every ${pollMs} ms: ${SAMPLES} tasks, one at a time`);
    pickup[pollMs] = await pickupRun(handoff, pollMs);
    idle[pollMs] = await idleCost(pollMs);
  }
  section = report(runs, pickup, idle);
} catch (error) {
  if (interrupted) await new Promise(() => {}); // the signal's handler cleans up and exits
  log(`bench/workers.js failed: ${error.stack ?? error}`);
  for (const w of new Set([...current, ...live]))
    log(`--- worker ${w.pid} (${w.args.join(' ')}), stderr:\n${w.stderr}`);
  await cleanup();
  process.exit(1);
}
await cleanup();
writeDocSection('workers', section);
log(`  took ${((nowMs() - began) / 1000).toFixed(0)} s`);

function report(runs, pickup, idle) {
  const rate = (s, field = 'perS') => median(runs[key(s)].map((r) => r[field]));
  const base = rate(SETUPS[0]);
  const baseSteady = rate(SETUPS[0], 'steadyPerS');
  const each = (s) => runs[key(s)].map((r) => r.perS.toFixed(0)).join(', ');
  const throughput = SETUPS.map((s, i) => {
    const value = `${rate(s).toFixed(1)} stages/s (runs ${each(s)}; steady ${rate(s, 'steadyPerS').toFixed(1)})`;
    const baseline =
      i === 0 ? '—' : `1 worker: ${base.toFixed(1)} stages/s (steady ${baseSteady.toFixed(1)})`;
    const ratio =
      i === 0 ? '1×' : `${fmtRatio(rate(s) / base)} (steady ${fmtRatio(rate(s, 'steadyPerS') / baseSteady)})`;
    return `| ${s.label} | ${value} | ${baseline} | ${ratio} | — | info |`;
  });
  const two = SETUPS[1];
  const four = SETUPS[2];
  const cpuRow = (s) => {
    const worker = rate(s, 'workerCpuMs');
    const pg = rate(s, 'dbCpuMs');
    const ceiling = (cpus().length * 1000) / (worker + pg);
    return `| ⓘ CPU a stage, ${s.workers} worker${s.workers > 1 ? 's' : ''}: the workers + PostgreSQL (medians) | ${worker.toFixed(2)} ms + ${pg.toFixed(2)} ms | ${cpus().length} cores ÷ that: a ceiling of ${ceiling.toFixed(0)} stages/s | measured ÷ ceiling: ${(rate(s) / ceiling).toFixed(2)} | — | info |`;
  };
  // the events' `at` has whole milliseconds
  const ms = (x) => fmtMs(x, 0);
  const parts = (x) =>
    `send ${ms(median(x.send))}, queue wait ${ms(median(x.wait))} (p95 ${ms(quantile(x.wait, 0.95))}), start ${ms(median(x.start))}`;
  const pickupRows = (pollMs) => {
    const { fresh, handoff } = pickup[pollMs];
    const setting = pollMs === DEFAULT_POLL_MS ? 'default polling' : `\`TROUPE_QUEUE_POLL_MS=${pollMs}\``;
    const row = (what, xs) => {
      const p95 = quantile(xs, 0.95);
      return `| Pickup, ${what}, ${setting}: p95 (p50) | ${ms(p95)} (${ms(quantile(xs, 0.5))}) | idle polling period: ${pollMs} ms | p95 = ${(p95 / pollMs).toFixed(2)} periods | < 100 ms | ${p95 < 100 ? 'PASS' : 'FAIL'} |`;
    };
    return [
      row('handoff across workers (stage 1 completed on A → stage 2 started on B)', handoff.total),
      `| ⓘ where the handoff's time goes, ${setting} (medians) | ${parts(handoff)} | — | — | — | info |`,
      row('a submitted task (task_created → stage 1 started)', fresh.total),
      `| ⓘ where the submission's time goes, ${setting} (medians) | ${parts(fresh)} | — | — | — | info |`,
    ];
  };
  const idleRow = (pollMs) => {
    const x = idle[pollMs];
    const setting = pollMs === DEFAULT_POLL_MS ? 'default polling' : `\`TROUPE_QUEUE_POLL_MS=${pollMs}\``;
    const b = idle[DEFAULT_POLL_MS];
    const total = (c) => c.workerPct + c.dbPct;
    return `| ⓘ One idle worker (all runtimes: 9 lanes), ${setting}: CPU of the worker + of its PostgreSQL backends | ${x.workerPct.toFixed(1)} % + ${x.dbPct.toFixed(1)} % of a core | ${pollMs === DEFAULT_POLL_MS ? '—' : `default polling: ${total(b).toFixed(1)} %`} | ${pollMs === DEFAULT_POLL_MS ? '—' : fmtRatio(total(x) / total(b))} | — | info |`;
  };
  return `<!-- workers:start -->
## Workers on PostgreSQL

Written by \`node bench/workers.js${quick ? ' --quick' : ''}\` (after \`npm run build\`); ratios from one run, which took ${((nowMs() - began) / 1000).toFixed(0)} s.

- **Date:** ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}
- **Machine:** Node ${process.version}, ${cpus().length} cores, load average ${load.map((x) => x.toFixed(2)).join(' ')} (1, 5, 15 min) at the start
- **PostgreSQL:** ${db.version} on 127.0.0.1 (the same machine), the store and the queue in one database, the store's client ${pgClient === 'native' ? 'libpq (native)' : 'the bridge'}

| Figure | Value | Baseline (same run) | Ratio | Target | Result |
| --- | --- | --- | --- | --- | --- |
${throughput.join('\n')}
| ⓘ Where the curve flattens: 4 workers ÷ 2 workers | ${fmtRatio(rate(four) / rate(two))} (steady ${fmtRatio(rate(four, 'steadyPerS') / rate(two, 'steadyPerS'))}) | — | — | — | info |
${[SETUPS[0], two, four].map(cpuRow).join('\n')}
${pickupRows(DEFAULT_POLL_MS).join('\n')}
${pickupRows(FAST_POLL_MS).join('\n')}
${idleRow(DEFAULT_POLL_MS)}
${idleRow(FAST_POLL_MS)}

**Method.** One PostgreSQL database of the bench's own (\`troupe_bench_<pid>\`, dropped at the end) holds
the store and the queue (\`TROUPE_STORE=postgres://…\`, \`TROUPE_QUEUE=''\`); the workers are real
\`troupe worker\` processes (\`bin/troupe.js\`, started and told SIGTERM by the bench, each expected to
exit 0), the stages run on the scripted runtime with zero-latency replies, and the tasks are made and
their wake-ups sent by this process through the code \`troupe run --detach\` runs (\`TaskService.start\`,
\`enqueueWakeUps\`), because a CLI process per task would take longer than the tasks. All times are the
events' \`at\` in the store and pg-boss's \`created_on\`/\`started_on\`, written by processes on this one
machine's clock. **Throughput**: ${TASKS} tasks of a 5-agent linear claude pipeline a run, made while no worker
runs; the workers (\`--runtimes claude --concurrency 1\`, so that a worker is one process and one task at a
time; the store is synchronous, so a second slot in the same process only overlaps the queue's calls —
an ⓘ row measures the default \`--concurrency 2\`, another the default \`--runtimes\`, all eight lanes, which
a worker with a free slot asks in turn) are started and ready, then all the wake-ups are sent at once. Stages completed ÷ (last \`task_completed\` − first \`stage_started\`); "steady" counts only
the completions between the 10th and the 90th percentile (without the workers' first poll and the last
tasks' tail). ${ROUNDS} round(s) of the ${SETUPS.length} setups, the order rotating; medians. Every task is checked to
have completed each stage exactly once. The machine's 2 cores run the workers, PostgreSQL and this
process: past 2 workers there is no core left to add. *CPU a stage*: the CPU time (/proc) the workers and
the database's backends used from the sends to the last task's end, ÷ the stages; the ceiling is what the
cores would do at that cost with nothing else running (this process, the machine's other users). The
runs of one setup vary by tens of percent on this shared machine (each run's figure is in the row). **Pickup**: ${SAMPLES} tasks of a 2-agent pipeline, writer (claude) →
editor (codex), sent one at a time, each after the previous ended and a random pause of up to one polling
period; worker A serves only claude and B only codex (\`--concurrency 1\`), so the editor's stage must cross
to another process (checked: B's pid in the run that started it). The writer's reply comes after a random
delay of up to one period, so that its stage ends anywhere in B's polling (A and B poll with the same
period and would otherwise keep one phase). Handoff: stage 2's \`stage_started\` − stage 1's
\`stage_completed\`; submission: stage 1's \`stage_started\` − \`task_created\`. Split at the wake-up's pg-boss
job: *send* (A ends its run, releases the lease, reads the task and sends the wake-up; for a submission,
the send), *queue wait* (until a worker's fetch takes the job), *start* (B takes the lease, replays the
log, starts the stage). Run once with the default polling and once with \`TROUPE_QUEUE_POLL_MS=${FAST_POLL_MS}\`.
**Idle**: one worker with the defaults (every runtime: 8 lanes and the check lane, polled in turn), idle
for ${IDLE_MS / 1000} s after 1 s; CPU from /proc of the worker and of the database's backends.

**How a wake-up is picked up.** troupe does not use pg-boss's \`work()\` (whose \`pollingIntervalSeconds\` is at
least 0.5 s and which has no LISTEN/NOTIFY in 10.4): \`PgBossQueue.loop\` (src/store/queue/pg-boss-queue.ts)
calls \`fetch\` on each of its lanes, and when it took nothing it idles until a \`NOTIFY troupe_wake\` for one
of its lanes (sent with every wake-up due now) or \`pollMs\` (500 ms unless \`TROUPE_QUEUE_POLL_MS\` is set),
which brings in the wake-ups scheduled for later and any notification missed. So the *queue wait* is a few
milliseconds whatever the period, and a shorter period only costs queries while idle (the last rows).
Before the notification (b8fa9a0), the same bench gave a handoff p95 of 482 ms (p50 291 ms) and a
submission p95 of 488 ms at the default period: the wait was the poll.

**Found by this bench** (fixed in 9c2006c): a worker's two work loops (its lanes, the check lane) shared
one early exit from their idle pause, so a job's end woke whichever loop had gone idle last, and the slot
it freed could stay empty for the rest of a 500 ms pause while wake-ups waited. Before the fix, the same
bench (2026-12-02, load 2.4) gave 67 stages/s for 1 worker, 129 for 2 (1.91×) and 173 for 4 (2.56×): the
curve looked better than linear because a lone worker idled.
<!-- workers:end -->`;
}
