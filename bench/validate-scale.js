// How `troupe validate` scales with the number of agents: 1,000 and 10,000 agents of the same mix
// (a chain with llm gates and reject loops, condition expressions, nunjucks templates, `extends`),
// timed in this process (validatePipelineFile from dist/) and as the CLI. Linear is a ratio of ≈ 10.
// Writes only its own section of docs/benchmarks.md.
//   npx tsc -p tsconfig.build.json && npx rolldown -c rolldown.config.js && node --expose-gc bench/validate-scale.js
//   [--root <checkout>] (measure another checkout's build, for a before/after) [--runs 3] [--no-write]
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fmtRatio, median, nowMs, tempDir } from './lib.js';

const HERE = fileURLToPath(new URL('..', import.meta.url));
const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : fallback;
};
const ROOT = resolve(arg('--root', HERE));
const RUNS = Number(arg('--runs', 3));
const SIZES = [1_000, 10_000];
const DOC = join(HERE, 'docs', 'benchmarks.md');
const log = (m) => process.stderr.write(`${m}\n`);

/** n agents: every 3rd extends an abstract base, every 5th has an llm gate that rejects back. */
export function mixedPipeline(n) {
  const lines = [
    'agents:',
    '  - id: base',
    '    abstract: true',
    '    runtime: claude',
    '    context_window: 2',
  ];
  for (let i = 1; i <= n; i++) {
    lines.push(`  - id: a${i}`);
    lines.push(i % 3 === 0 ? '    extends: base' : '    runtime: claude');
    lines.push(
      i % 2 === 0
        ? `    system_prompt: "Step ${i}: {{ input | trim }}{% if reject_reason %} Fix: {{ reject_reason }}{% endif %}"`
        : `    system_prompt: "Step ${i}: {{ input }}"`,
    );
    if (i === n) continue;
    if (i % 5 === 0) lines.push('    gate: { type: llm, prompt: "Is {{ output }} done?" }');
    lines.push('    handoffs:');
    if (i % 5 === 0) {
      lines.push(
        `      - { to: a${i + 1}, condition: on_approve }`,
        `      - { to: a${i - 1}, condition: on_reject }`,
      );
    } else if (i % 7 === 0) {
      lines.push(`      - { to: a${i + 1}, condition: "score >= 8 and status == done" }`);
      lines.push(`      - { to: a${i + 1}, condition: "status != done", payload: "again: {{ output }}" }`);
    } else {
      lines.push(`      - to: a${i + 1}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The reliability review's repro (1a): a plain chain a0 → a1 → …, nothing else. */
export function chainPipeline(n) {
  const agents = Array.from({ length: n }, (_, i) => {
    const handoff = i < n - 1 ? `\n    handoffs: [{to: a${i + 1}}]` : '';
    return `  - id: a${i}\n    runtime: claude\n    system_prompt: "p${i}"${handoff}`;
  });
  return `agents:\n${agents.join('\n')}\n`;
}

const SHAPES = { mixed: mixedPipeline, chain: chainPipeline };

const { validatePipelineFile } = await import(pathToFileURL(join(ROOT, 'dist/pipeline/validate.js')).href);
const bin = join(ROOT, 'bin/troupe.js');
const dir = tempDir('validate-scale');
const files = Object.fromEntries(
  Object.entries(SHAPES).map(([shape, generate]) => [
    shape,
    Object.fromEntries(
      SIZES.map((n) => {
        const file = join(dir, `${shape}-${n}.yaml`);
        writeFileSync(file, generate(n));
        return [n, file];
      }),
    ),
  ]),
);

function inProcess(file) {
  // what the last run left behind is collected outside the timing (node --expose-gc)
  globalThis.gc?.();
  const t0 = nowMs();
  const result = validatePipelineFile(file, { pathEnv: '' });
  const ms = nowMs() - t0;
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length) throw new Error(`${file}: ${errors[0].message}`);
  return ms;
}

function cli(file) {
  const t0 = nowMs();
  const r = spawnSync(process.execPath, [bin, 'validate', file], {
    stdio: 'ignore',
    env: { ...process.env, PATH: '' },
  });
  const ms = nowMs() - t0;
  if (r.status !== 0) throw new Error(`validate ${file} exited ${r.status ?? r.signal}`);
  return ms;
}

const began = nowMs();
const rows = [];
for (const shape of Object.keys(SHAPES)) {
  const times = { inProcess: {}, cli: {} };
  for (const n of SIZES) {
    const file = files[shape][n];
    inProcess(file); // warm-up: JIT, nunjucks loaded
    times.inProcess[n] = median(Array.from({ length: RUNS }, () => inProcess(file)));
    times.cli[n] = median(Array.from({ length: RUNS }, () => cli(file)));
    log(
      `  ${shape}, ${n} agents: ${times.inProcess[n].toFixed(0)} ms in process, ${times.cli[n].toFixed(0)} ms CLI`,
    );
  }
  rows.push([
    `${shape}: \`validatePipelineFile\`, in process`,
    times.inProcess[10_000] / times.inProcess[1_000],
  ]);
  rows.push([`${shape}: \`troupe validate <file>\`, wall`, times.cli[10_000] / times.cli[1_000]]);
}
const tookS = (nowMs() - began) / 1000;
const table = [
  '| Figure | time(10,000 agents) ÷ time(1,000 agents) | Target (linear ≈ 10×) | Result |',
  '| --- | --- | --- | --- |',
  ...rows.map(([figure, r]) => `| ${figure} | ${fmtRatio(r)} | ≤ 15× | ${r <= 15 ? 'PASS' : 'FAIL'} |`),
].join('\n');

const section = `<!-- validate-scale:start -->
## Validate at scale

Written by \`node --expose-gc bench/validate-scale.js\` (after the build); do not edit by hand.

- **Date:** ${new Date().toISOString().slice(0, 19)}Z
- **Machine:** Node ${process.version}, ${cpus()[0]?.model.trim() ?? '?'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}
- **Bench time:** ${Math.round(tookS)} s

${table}

**Method** (bench/validate-scale.js). Two shapes, each at 1,000 and 10,000 agents, both valid. *mixed*: a chain
in which every 3rd agent \`extends\` an abstract base, every 2nd prompt is a nunjucks template (a filter and an
\`if\`), every 5th agent has an llm gate that hands back on \`on_reject\`, every 7th hands on by two condition
expressions. *chain*: the reliability review's repro (1a), a plain \`a0 → a1 → …\` chain. Each file is validated
${RUNS} times after one warm-up, in this process (\`validatePipelineFile\` from \`dist/\`, empty PATH, a full GC before each run) and as
\`node bin/troupe.js validate <file>\` (PATH empty, so every agent also gets its "not on PATH" warning); medians.
Only ratios are reported: the machine is shared. A ratio under 10 means fixed costs (startup, the first
compile of each check) still weigh at 1,000 agents. Before the fix (issue #18: lookups by \`find\` inside loops over
the agents, and a fixpoint over all agents per added agent in the reject-loop lint), the same bench with
\`--root\` on a build of \`632a020\` (one run each) measured: mixed 60.3× in process and 29.3× for the CLI,
chain 271.6× and 391.1× (its 10,000-agent file took 111 s in process and 222 s as the CLI).
<!-- validate-scale:end -->`;

process.stdout.write(`${table}\n`);
if (!process.argv.includes('--no-write')) {
  const old = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '# Benchmarks\n';
  const re = /<!-- validate-scale:start -->[\s\S]*?<!-- validate-scale:end -->/;
  const next = re.test(old) ? old.replace(re, section) : `${old.replace(/\n*$/, '\n\n')}${section}\n`;
  writeFileSync(DOC, next);
  log(`updated ${DOC}`);
}
