// `troupe watch` on a tracker (#34): the cost of one poll of 500 GitHub issues, and the time from an
// issue becoming eligible to its task starting (goal: one poll interval plus under 1 s).
// The tracker is the loopback GitHub mock the tests use (test/fixtures/github-api/server.ts, bundled
// here by rolldown); troupe is the built binary.
//   npm run build && node bench/watch.js [--rounds 5] [--issues 6] [--interval 2000] [--no-write]
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { build } from 'rolldown';
import { selectIssues } from '../dist/scheduler/issue-queue.js';
import { openGitHubTracker } from '../dist/trackers/github.js';
import { fmtRatio, median, nowMs, tempDir, writeDocSection } from './lib.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'troupe.js');
const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const ROUNDS = arg('--rounds', 5);
const LATENCY_ISSUES = arg('--issues', 6);
const INTERVAL_MS = arg('--interval', 2000);
const ISSUES = 500;
const log = (m) => process.stderr.write(`${m}\n`);
const started = nowMs();
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/** The GitHub mock, a TypeScript module: bundled to plain JS once, its fixtures read from where they are. */
async function loadGitHubMock() {
  const file = join(ROOT, 'test', 'fixtures', 'github-api', 'server.ts');
  const out = join(tempDir('watch-mock'), 'server.mjs');
  await build({
    input: file,
    platform: 'node',
    logLevel: 'silent',
    output: { file: out, format: 'esm' },
    transform: { define: { 'import.meta.url': JSON.stringify(pathToFileURL(file).href) } },
  });
  return (await import(pathToFileURL(out).href)).startGitHubMock;
}

function project(mock, extra = '') {
  const dir = tempDir('watch');
  mkdirSync(join(dir, '.troupe', 'pipelines'), { recursive: true });
  writeFileSync(
    join(dir, '.troupe', 'pipelines', 'default.yaml'),
    'agents:\n  - id: builder\n    runtime: claude\n    system_prompt: "Build: {{ input }}"\n',
  );
  writeFileSync(join(dir, 'script.yaml'), 'agents:\n  builder:\n    - "Built it."\n');
  writeFileSync(
    join(dir, '.troupe', 'config.yaml'),
    `tracker:\n  kind: github\n  owner: ${mock.owner}\n  repo: ${mock.repo}\n  api_url: ${mock.url}\n${extra}`,
  );
  return dir;
}

/** The built binary, spawned without blocking this process (the mock answers from it). */
async function timed(cwd, args, env = {}) {
  const t0 = nowMs();
  const r = await execa(process.execPath, [BIN, ...args], {
    cwd,
    reject: false,
    env: { NO_COLOR: '1', ...env },
  });
  if (r.exitCode !== 0) throw new Error(`troupe ${args.join(' ')} exited ${r.exitCode}: ${r.stderr}`);
  return { ms: nowMs() - t0, stdout: r.stdout };
}

/** The same requests the poll makes, by fetch in this process: the pages in turn, then the blockers 4 at a time. */
async function rawReads(mock) {
  const headers = { authorization: `token ${mock.token}`, accept: 'application/vnd.github+json' };
  const repo = `${mock.url}/repos/${mock.owner}/${mock.repo}`;
  let url = `${repo}/issues?state=open&sort=created&direction=asc&per_page=100`;
  const issues = [];
  while (url) {
    const res = await fetch(url, { headers });
    issues.push(...(await res.json()));
    url = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
  }
  const blocked = issues.filter((i) => i.issue_dependencies_summary?.total_blocked_by > 0);
  for (let at = 0; at < blocked.length; at += 4) {
    await Promise.all(
      blocked
        .slice(at, at + 4)
        .map((i) =>
          fetch(`${repo}/issues/${i.number}/dependencies/blocked_by?per_page=100`, { headers }).then((r) =>
            r.json(),
          ),
        ),
    );
  }
  return issues.length;
}

function addIssues(mock) {
  for (let n = 1; n <= ISSUES; n++) {
    mock.addIssue({
      title: `issue ${n}`,
      blocked_by: n % 10 === 0 ? [n - 1] : [],
      labels: n % 50 === 25 ? ['priority: urgent'] : [],
    });
  }
}

const POLICY = {
  activeStates: ['open'],
  terminalStates: ['closed'],
  pipelines: {},
  defaultPipeline: 'default',
  concurrency: { max: 3, perState: {} },
};

/**
 * One poll as a running watcher makes it (the adapter's reads, then the decision), in this process,
 * against the same requests made by fetch; and `troupe watch --once --dry-run` as a one-shot
 * command, against `troupe --version`. Interleaved, medians.
 */
async function pollCost(startGitHubMock) {
  const mock = await startGitHubMock();
  addIssues(mock);
  const tracker = await openGitHubTracker(
    { owner: mock.owner, repo: mock.repo, apiUrl: mock.url },
    { env: { GH_TOKEN: mock.token } },
  );
  const dir = project(mock, '  concurrency: {max: 3}\n');
  const env = { GH_TOKEN: mock.token };
  await timed(dir, ['watch', '--once', '--dry-run', '--json'], env); // warm-up (the store is created)
  await rawReads(mock);
  await tracker.candidates();
  const figures = { poll: [], decide: [], raw: [], cli: [], startup: [] };
  let requests = 0;
  for (let r = 0; r < ROUNDS; r++) {
    let t0 = nowMs();
    const before = mock.requests.length;
    const candidates = await tracker.candidates();
    requests = mock.requests.length - before;
    const t1 = nowMs();
    const selection = selectIssues(candidates, [], POLICY, new Date());
    figures.decide.push(nowMs() - t1);
    figures.poll.push(nowMs() - t0);
    if (selection.start.length + selection.skipped.length !== ISSUES)
      throw new Error('not every issue decided');
    t0 = nowMs();
    await rawReads(mock);
    figures.raw.push(nowMs() - t0);
    figures.cli.push((await timed(dir, ['watch', '--once', '--dry-run', '--json'], env)).ms);
    figures.startup.push((await timed(dir, ['--version'])).ms);
  }
  await mock.close();
  return { ...Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, median(v)])), requests };
}

/** Issues added at random moments to a running watcher: the time until it claims each (its task created first). */
async function eligibleToStart(startGitHubMock) {
  const mock = await startGitHubMock();
  const dir = project(mock, `  polling: {interval_ms: ${INTERVAL_MS}}\n`);
  const child = spawn(process.execPath, [BIN, 'watch', '--script', 'script.yaml'], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: '1', GH_TOKEN: mock.token },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const listed = () => mock.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/issues')).length;
  while (listed() === 0) {
    if (child.exitCode !== null) throw new Error(`troupe watch exited: ${stderr}`);
    await sleep(20);
  }
  const latencies = [];
  try {
    for (let i = 0; i < LATENCY_ISSUES; i++) {
      await sleep(Math.random() * INTERVAL_MS);
      const issue = mock.addIssue({ title: `new ${i}` });
      const t0 = nowMs();
      while (!issue.labels.includes('troupe')) {
        if (nowMs() - t0 > INTERVAL_MS * 5) throw new Error(`issue #${issue.number} not taken: ${stderr}`);
        await sleep(5);
      }
      latencies.push(nowMs() - t0);
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((done) => child.once('exit', done));
    await mock.close();
  }
  return latencies;
}

const startGitHubMock = await loadGitHubMock();
log(`poll of ${ISSUES} issues, ${ROUNDS} rounds…`);
const cost = await pollCost(startGitHubMock);
log(`eligible → started, ${LATENCY_ISSUES} issues, interval ${INTERVAL_MS} ms…`);
const latencies = await eligibleToStart(startGitHubMock);
const worst = Math.max(...latencies);
const goal = INTERVAL_MS + 1000;

const ms = (v) => `${Math.round(v)} ms`;
const table = [
  '| Figure | Value | Baseline | Ratio | Target | Result |',
  '| --- | --- | --- | --- | --- | --- |',
  `| one poll of ${ISSUES} issues in a running watcher (${cost.requests} requests, then the decision), median of ${ROUNDS} | ${ms(cost.poll)} | the same requests by \`fetch\` in this process ${ms(cost.raw)} | ${fmtRatio(cost.poll / cost.raw)} | | |`,
  `| of which the decision (\`selectIssues\`, ${ISSUES} issues) | ${cost.decide.toFixed(1)} ms | | | | |`,
  `| \`troupe watch --once --dry-run --json\`, the built binary, wall | ${ms(cost.cli)} | \`troupe --version\` ${ms(cost.startup)} | ${fmtRatio(cost.cli / cost.startup)} | | |`,
  `| issue eligible → task started, median of ${latencies.length} | ${ms(median(latencies))} | poll interval ${ms(INTERVAL_MS)} | ${fmtRatio(median(latencies) / INTERVAL_MS)} | | |`,
  `| issue eligible → task started, worst | ${ms(worst)} | interval + 1 s = ${ms(goal)} | ${fmtRatio(worst / goal)} | ≤ 1× | ${worst <= goal ? 'PASS' : 'FAIL'} |`,
].join('\n');
console.log(table);

const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
const section = `<!-- watch:start -->
## Trackers (\`troupe watch\`)

Written by \`node bench/watch.js\` (after \`npm run build\`); do not edit by hand.

- **Date:** ${date}
- **Machine:** Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}
- **Bench time:** ${Math.round((nowMs() - started) / 1000)} s

${table}

**Method** (bench/watch.js). The tracker is the loopback GitHub mock of the tests
(test/fixtures/github-api/server.ts, in the bench process) with ${ISSUES} open issues, every tenth
blocked by the one before it (GitHub counts its blockers, so the poll reads them: 50 requests beside
the 5 pages of 100). A running watcher's poll is the GitHub adapter's \`candidates()\` and the
decision (\`selectIssues\`, concurrency 3: 3 to start, 497 skipped with their reasons), from dist/,
in the bench process; its baseline is the same requests made there by \`fetch\` (pages in turn,
blockers 4 at a time as the adapter asks them), interleaved, ${ROUNDS} rounds after a warm-up. The
one-shot command is the built binary, its wall time against \`troupe --version\` in the same
rounds (Node's start, loading the watch code and the store, the exit). Latency: \`troupe watch
--script\` runs with a ${INTERVAL_MS} ms interval; ${LATENCY_ISSUES} issues are added one by one at
random moments, each timed from its creation until the mock sees it labelled \`troupe\` (the claim,
written after its task is created). The goal is one interval plus under 1 s.
<!-- watch:end -->`;
if (!process.argv.includes('--no-write')) log(`updated ${writeDocSection('watch', section)}`);
