// Target 3: peak RSS of 50- and 200-stage runs (the real CLI, in child processes), and whether
// memory grows with the stages already run (one 800-stage run sampled after every stage).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { makeProject, median, tempDir } from './lib.js';

const BIN = fileURLToPath(new URL('../bin/troupe.js', import.meta.url));
const PROBE = fileURLToPath(new URL('./rss-probe.js', import.meta.url));
const CHILD = fileURLToPath(new URL('./memory-child.js', import.meta.url));

function peakRssKb(args, cwd) {
  const file = join(tempDir('rss'), 'rss.json');
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(PROBE).href, ...args], {
    cwd,
    env: { ...process.env, TROUPE_BENCH_RSS_FILE: file },
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0)
    throw new Error(`node ${args.join(' ')} exited ${r.status ?? r.signal}: ${r.stderr.trim().slice(-500)}`);
  return JSON.parse(readFileSync(file, 'utf8')).maxRssKb;
}

/** `troupe run` of an n-stage pipeline on the scripted runtime; checks the task completed. */
function cliRun(stages, shape) {
  const project = makeProject(`mem${stages}`, stages, shape);
  const kb = peakRssKb(
    [BIN, 'run', '-f', project.pipelineFile, '--script', project.scriptFile, 'bench'],
    project.root,
  );
  const db = new Database(join(project.root, '.troupe', 'troupe.db'), { readonly: true });
  const task = db.prepare('SELECT id, status FROM tasks').get();
  const done = db.prepare("SELECT count(*) AS n FROM events WHERE type = 'stage_completed'").get().n;
  db.close();
  if (task?.status !== 'completed' || done !== stages) {
    throw new Error(`troupe run of ${stages} stages ended ${task?.status} after ${done} stages`);
  }
  return kb;
}

export function measureMemory({ runs = 3, log = () => {} } = {}) {
  log(
    `  peak RSS: node -e 0; troupe run: 2-agent loop, 50, 200 and 800 stages; 200-agent linear; ${runs} runs each`,
  );
  const base = [];
  const r50 = [];
  const r200 = [];
  const r800 = [];
  const linear200 = [];
  for (let i = 0; i < runs; i++) {
    base.push(peakRssKb(['-e', '0'], process.cwd()));
    r50.push(cliRun(50, 'loop'));
    r200.push(cliRun(200, 'loop'));
    r800.push(cliRun(800, 'loop'));
    linear200.push(cliRun(200, 'linear'));
  }
  log('  growth: one 800-stage loop task through the API, memory and clock read after every stage');
  const child = spawnSync(process.execPath, ['--expose-gc', CHILD, '800'], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (child.status !== 0)
    throw new Error(`memory-child exited ${child.status}: ${child.stderr.trim().slice(-500)}`);
  const curve = JSON.parse(child.stdout);
  const mb = (bytes) => bytes / 1024 / 1024;
  const heap = curve.heapAfterGc;
  if (process.env.TROUPE_BENCH_DEBUG)
    log(`  raw kB: base ${base} / 50 ${r50} / 200 ${r200} / 800 ${r800} / linear ${linear200}`);
  const ms = curve.msAfterStage;
  return {
    runs,
    baselineMb: median(base) / 1024,
    peak50Mb: median(r50) / 1024,
    peak200Mb: median(r200) / 1024,
    peak800Mb: median(r800) / 1024,
    peakLinear200Mb: median(linear200) / 1024,
    rssAtStage200Mb: mb(curve.rssAfterStage[199]),
    rssAtStage800Mb: mb(curve.rssAfterStage[799]),
    heapAtStage200Mb: mb(heap[200]),
    heapAtStage800Mb: mb(heap[800]),
    heapPerStageKb: (heap[800] - heap[200]) / 600 / 1024,
    /** ms a stage over stages 1–200, and over stages 601–800, of the same task */
    msPerStageFirst200: ms[199] / 200,
    msPerStageLast200: (ms[799] - ms[599]) / 200,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(measureMemory({ log: console.log }));
}
