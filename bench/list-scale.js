// `troupe list` on stores of 10 and 10,000 finished tasks: its cost should not grow with history.
// Each store is filled with copies of one real 3-stage scripted task (its events, new ids), then
// `troupe list` (the built binary) runs on both, interleaved, and the store's list query runs in
// this process; the list query as it was before the limit-first rewrite is timed on the same
// store as the baseline. Writes only its own section of docs/benchmarks.md.
//   npm run build && node bench/list-scale.js [--tasks 10000] [--rounds 9] [--no-write]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../dist/store/sqlite/sqlite-store.js';
import { median, nowMs, tempDir } from './lib.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'troupe.js');
const DOC = join(ROOT, 'docs', 'benchmarks.md');
const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const BIG = arg('--tasks', 10_000);
const SMALL = 10;
const ROUNDS = arg('--rounds', 9);
const log = (m) => process.stderr.write(`${m}\n`);
const started = nowMs();

const troupe = (cwd, args) => {
  const t0 = nowMs();
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  if (r.status !== 0) throw new Error(`troupe ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms: nowMs() - t0, stdout: r.stdout };
};

/** A project whose store holds `n` finished 3-stage tasks. */
function projectWith(n) {
  const dir = tempDir(`list-${n}`);
  mkdirSync(join(dir, '.troupe', 'pipelines'), { recursive: true });
  writeFileSync(
    join(dir, '.troupe', 'pipelines', 'bench.yaml'),
    `agents:
  - id: plan
    runtime: claude
    system_prompt: "Plan: {{ input }}"
    handoffs: [{ to: build }]
  - id: build
    runtime: claude
    system_prompt: "Build: {{ input }}"
    handoffs: [{ to: review }]
  - id: review
    runtime: claude
    system_prompt: "Review: {{ input }}"
`,
  );
  writeFileSync(
    join(dir, 'script.yaml'),
    'agents:\n  plan: ["a plan"]\n  build: ["built it"]\n  review: ["looks good"]\n',
  );
  troupe(dir, ['run', '--no-interactive', '--script', 'script.yaml', 'the first task']);
  const store = openSqliteStore(join(dir, '.troupe', 'troupe.db'));
  const [model] = store.tasks({ limit: 1 });
  const [created, ...rest] = [...store.events(model.id)].map(({ seq, taskId, at, ...event }) => event);
  for (let i = 1; i < n; i++) {
    const { taskId } = store.createTask({ ...created, input: `task ${i}` });
    store.append(taskId, rest, { status: 'completed' });
  }
  store.close();
  return dir;
}

// the list query before the limit-first rewrite, on the schema before it (no tasks_by_created):
// every task summarised, then sorted, then cut
const BEFORE = `SELECT t.id, t.status, t.pipeline, t.input, t.created_at,
  (SELECT json_extract(e.data, '$.agent') FROM events e
   WHERE e.task_id = t.id AND e.type = 'stage_started' AND e.superseded_by IS NULL
   ORDER BY e.seq DESC LIMIT 1) AS current_agent,
  coalesce((SELECT e.at FROM events e WHERE e.task_id = t.id ORDER BY e.seq DESC LIMIT 1), t.updated_at) AS updated_at
  FROM tasks t NOT INDEXED ORDER BY t.created_at DESC, t.rowid DESC LIMIT 50`;

function inProcess(dir) {
  const file = join(dir, '.troupe', 'troupe.db');
  const store = openSqliteStore(file);
  const db = new Database(file, { readonly: true });
  const before = db.prepare(BEFORE);
  const now = [];
  const then = [];
  for (let i = 0; i < 3; i++) {
    store.tasks({ limit: 50 });
    before.all();
  }
  for (let i = 0; i < 15; i++) {
    let t0 = nowMs();
    store.tasks({ limit: 50 });
    now.push(nowMs() - t0);
    t0 = nowMs();
    before.all();
    then.push(nowMs() - t0);
  }
  db.close();
  store.close();
  return { now: median(now), before: median(then) };
}

log(`filling a store with ${SMALL} tasks and one with ${BIG}`);
const small = projectWith(SMALL);
const t0 = nowMs();
const big = projectWith(BIG);
log(`  ${BIG} tasks in ${((nowMs() - t0) / 1000).toFixed(1)} s`);

log(`troupe list, ${ROUNDS} interleaved rounds`);
const cli = { [SMALL]: [], [BIG]: [], baseline: [] };
for (let i = 0; i < ROUNDS + 1; i++) {
  const a = troupe(small, ['list']);
  const b = troupe(big, ['list']);
  const base = nowMs();
  spawnSync(process.execPath, ['-e', '0']);
  if (i === 0) continue; // warm the disk cache and the binary
  cli[SMALL].push(a.ms);
  cli[BIG].push(b.ms);
  cli.baseline.push(nowMs() - base);
  if (b.stdout.split('\n').filter(Boolean).length !== 50)
    throw new Error('troupe list did not print 50 rows');
}
const listSmall = median(cli[SMALL]);
const listBig = median(cli[BIG]);
const queries = { [SMALL]: inProcess(small), [BIG]: inProcess(big) };
const tookS = (nowMs() - started) / 1000;

const ms = (x) => `${x.toFixed(x < 10 ? 2 : 0)} ms`;
const ratio = (a, b) => `${(a / b).toFixed(2)}×`;
const n = (x) => x.toLocaleString('en');
const pass = (ok) => (ok ? 'PASS' : 'FAIL');
const cliRatio = listBig / listSmall;
const table = [
  `| Figure | ${n(SMALL)} tasks | ${n(BIG)} tasks | ratio | Target | Result |`,
  '| --- | --- | --- | --- | --- | --- |',
  `| \`troupe list\` (50 rows), wall time, median of ${ROUNDS} | ${ms(listSmall)} | ${ms(listBig)} | ${ratio(listBig, listSmall)} | ≤ 1.2× | ${pass(cliRatio <= 1.2)} |`,
  `| \`store.tasks({limit: 50})\`, in process, median of 15 | ${ms(queries[SMALL].now)} | ${ms(queries[BIG].now)} | ${ratio(queries[BIG].now, queries[SMALL].now)} | | |`,
  `| baseline: the list query before the limit-first rewrite | ${ms(queries[SMALL].before)} | ${ms(queries[BIG].before)} | ${ratio(queries[BIG].before, queries[SMALL].before)} | | |`,
  `| baseline: \`node -e 0\` | ${ms(median(cli.baseline))} | | | | |`,
].join('\n');

const section = `<!-- list-scale:start -->
## Task list and history (\`troupe list\`)

Written by \`node bench/list-scale.js\` (after \`npm run build\`); do not edit by hand.

- **Date:** ${new Date().toISOString().slice(0, 19)}Z
- **Machine:** Node ${process.version}, ${cpus()[0]?.model.trim() ?? '?'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}
- **Bench time:** ${Math.round(tookS)} s

${table}

**Method** (bench/list-scale.js). Two projects; each store holds copies of one real finished task
(a 3-agent chain run with \`troupe run --script\`: its \`task_created\` and the events after
it, appended under new ids), ${n(SMALL)} in one and ${n(BIG)} in the other. \`troupe list\` is the
built binary, spawned in each project in turn (${ROUNDS} rounds after one warm-up; the wall time
includes Node's start, \`node -e 0\`). In process: the store's list query, and the query it ran
before (every task summarised with two subqueries on its events, then sorted, then cut to 50;
\`NOT INDEXED\`, as without \`tasks_by_created\`), on the same stores; the ${n(SMALL)}-task store's page
holds ${n(SMALL)} rows, the other's 50. The list now picks its page through \`tasks_by_created\` first
and summarises only those rows, so its cost does not grow with the tasks in the store.
<!-- list-scale:end -->`;

process.stdout.write(`${table}\n`);
if (!process.argv.includes('--no-write')) {
  const old = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '# Benchmarks\n';
  const re = /<!-- list-scale:start -->[\s\S]*?<!-- list-scale:end -->/;
  const next = re.test(old) ? old.replace(re, section) : `${old.replace(/\n*$/, '\n\n')}${section}\n`;
  writeFileSync(DOC, next);
  log(`updated ${DOC}`);
}
