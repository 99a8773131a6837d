// Worktree cost: a task worktree created and removed by troupe (ensureTaskWorktree +
// removeWorktree) on a 10,000-file repository, against plain `git worktree add` + `git worktree
// remove` timed in the same run. Writes only its own section of docs/benchmarks.md.
//   npx tsc -p tsconfig.build.json && node bench/worktrees.js [--runs 15] [--files 10000] [--no-write]
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { ensureTaskWorktree, removeWorktree } from '../dist/workspace/index.js';
import { median, nowMs, quantile, tempDir } from './lib.js';

const DOC = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'benchmarks.md');
const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};
const RUNS = arg('--runs', 15);
const FILES = arg('--files', 10_000);
const WARMUP = 2;
const log = (m) => process.stderr.write(`${m}\n`);
const git = (cwd, ...args) => execa('git', args, { cwd, stdin: 'ignore' });

const started = nowMs();
const repo = tempDir('worktrees');
await git(repo, 'init', '-q', '--initial-branch=main');
await git(repo, 'config', 'user.name', 'bench');
await git(repo, 'config', 'user.email', 'bench@localhost');
const perDir = 100;
for (let i = 0; i < FILES; i++) {
  const dir = join(repo, 'src', `d${Math.floor(i / perDir)}`);
  if (i % perDir === 0) mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `f${i}.ts`), `export const v${i} = ${i};\n`);
}
await git(repo, 'add', '--all');
await git(repo, 'commit', '-q', '-m', 'files');
const plainDir = tempDir('worktrees-plain');
log(`repo of ${FILES} files at ${repo}`);

async function plain(i) {
  const path = join(plainDir, `w${i}`);
  const t0 = nowMs();
  await git(repo, 'worktree', 'add', '-q', '-b', `plain/${i}`, path, 'main');
  const t1 = nowMs();
  await git(repo, 'worktree', 'remove', path);
  const t2 = nowMs();
  return { create: t1 - t0, remove: t2 - t1, total: t2 - t0 };
}

async function troupe(i) {
  const taskId = `B-${i}`;
  const t0 = nowMs();
  await ensureTaskWorktree({ repo, taskId, base: 'main' });
  const t1 = nowMs();
  await removeWorktree({ repo, taskId });
  const t2 = nowMs();
  return { create: t1 - t0, remove: t2 - t1, total: t2 - t0 };
}

const results = { plain: [], troupe: [] };
for (let i = 0; i < WARMUP + RUNS; i++) {
  // alternate which goes first, so neither always gets the warmer cache
  const order = i % 2 ? [plain, troupe] : [troupe, plain];
  for (const fn of order) {
    const r = await fn(i);
    if (i >= WARMUP) results[fn === plain ? 'plain' : 'troupe'].push(r);
  }
}
const stat = (side, key) => median(results[side].map((r) => r[key]));
const p95 = (side) =>
  quantile(
    results[side].map((r) => r.total),
    0.95,
  );
const ratio = stat('troupe', 'total') / stat('plain', 'total');
const ms = (v) => `${v.toFixed(0)} ms`;
const tookS = (nowMs() - started) / 1000;

const table = [
  '| Figure | troupe | `git worktree` (same run) | Ratio | Target | Result |',
  '| --- | --- | --- | --- | --- | --- |',
  `| create + remove, median | ${ms(stat('troupe', 'total'))} | ${ms(stat('plain', 'total'))} | ${ratio.toFixed(2)}x | ≤ 1.2x | ${ratio <= 1.2 ? 'PASS' : 'FAIL'} |`,
  `| create, median | ${ms(stat('troupe', 'create'))} | ${ms(stat('plain', 'create'))} | ${(stat('troupe', 'create') / stat('plain', 'create')).toFixed(2)}x | | |`,
  `| remove, median | ${ms(stat('troupe', 'remove'))} | ${ms(stat('plain', 'remove'))} | ${(stat('troupe', 'remove') / stat('plain', 'remove')).toFixed(2)}x | | |`,
  `| create + remove, p95 | ${ms(p95('troupe'))} | ${ms(p95('plain'))} | ${(p95('troupe') / p95('plain')).toFixed(2)}x | | |`,
].join('\n');

const section = `<!-- worktrees:start -->
## Worktrees

Written by \`node bench/worktrees.js\` (after \`npx tsc -p tsconfig.build.json\`); do not edit by hand.

- **Date:** ${new Date().toISOString().slice(0, 19)}Z
- **Machine:** Node ${process.version}, ${cpus()[0]?.model.trim() ?? '?'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}, git ${(await git(repo, '--version')).stdout.replace('git version ', '')}
- **Bench time:** ${Math.round(tookS)} s

${table}

**Method** (bench/worktrees.js). One repository of ${FILES.toLocaleString('en')} small files in ${Math.ceil(FILES / perDir)} folders,
one commit. *troupe*: \`ensureTaskWorktree({repo, taskId, base: 'main'})\` (checks the exclude file, looks for an
existing worktree and branch, \`git worktree add --no-track -b troupe/<task>\`, records base/task in the branch's
config) then \`removeWorktree({repo, taskId})\` (refuses uncommitted changes; the branch stays). *git*: \`git
worktree add -q -b plain/<i> <path> main\` then \`git worktree remove <path>\`, each spawned through execa like
troupe's calls. ${RUNS} rounds after ${WARMUP} warm-up rounds, alternating which side goes first; medians and
95th percentiles of per-round times.
<!-- worktrees:end -->`;

process.stdout.write(`${table}\n`);
if (!process.argv.includes('--no-write')) {
  const old = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '# Benchmarks\n';
  const re = /<!-- worktrees:start -->[\s\S]*?<!-- worktrees:end -->/;
  const next = re.test(old) ? old.replace(re, section) : `${old.replace(/\n*$/, '\n\n')}${section}\n`;
  writeFileSync(DOC, next);
  log(`updated ${DOC}`);
}
