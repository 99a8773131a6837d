// Small helpers shared by the benchmarks: statistics, temp dirs, pipeline generation.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))];
}

export function nowMs() {
  return Number(process.hrtime.bigint()) / 1e6;
}

const made = [];

/**
 * A fresh directory on the same disk as the system temp dir (a real file system, not :memory:).
 * Removed at process exit unless TROUPE_BENCH_KEEP is set.
 */
export function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), `troupe-bench-${prefix}-`));
  if (made.length === 0 && !process.env.TROUPE_BENCH_KEEP) {
    process.on('exit', () => {
      for (const d of made) rmSync(d, { recursive: true, force: true });
    });
  }
  made.push(dir);
  return dir;
}

/** The canned reply every stage gets: a short, fixed string (zero latency). */
export function reply(i) {
  return `output of step ${i}: done.`;
}

/**
 * An n-agent linear pipeline a1 → a2 → … → an with `always` handoffs (the default condition),
 * default context strategy, and the matching script (one canned reply per agent).
 */
export function linearPipeline(n) {
  const lines = ['agents:'];
  const agents = {};
  for (let i = 1; i <= n; i++) {
    lines.push(`  - id: a${i}`, '    runtime: claude', `    system_prompt: "Step ${i}: {{ input }}"`);
    if (i < n) lines.push('    handoffs:', `      - to: a${i + 1}`, '        condition: always');
    agents[`a${i}`] = [reply(i)];
  }
  const scriptYaml = [
    'agents:',
    ...Object.entries(agents).map(([id, r]) => `  ${id}: [${JSON.stringify(r[0])}]`),
  ].join('\n');
  return {
    yaml: `${lines.join('\n')}\n`,
    script: { agents, gates: {}, human: {} },
    scriptYaml: `${scriptYaml}\n`,
  };
}

/** A throwaway troupe project: .troupe/config.yaml (max_stages 1000), a pipeline ('linear' or 'loop') and its script. */
export function makeProject(prefix, stages, shape = 'linear') {
  const root = tempDir(prefix);
  const { yaml, script, scriptYaml } = shape === 'loop' ? loopPipeline(stages) : linearPipeline(stages);
  mkdirSync(join(root, '.troupe', 'pipelines'), { recursive: true });
  writeFileSync(join(root, '.troupe', 'config.yaml'), 'pipeline:\n  max_stages: 1000\n');
  const pipelineFile = join(root, '.troupe', 'pipelines', 'bench.yaml');
  writeFileSync(pipelineFile, yaml);
  const scriptFile = join(root, 'script.yaml');
  writeFileSync(scriptFile, scriptYaml);
  return { root, pipelineFile, scriptFile, script };
}

export function fmtMs(ms, digits = 3) {
  return `${ms.toFixed(digits)} ms`;
}

export function fmtRatio(r) {
  return `${r >= 10 ? r.toFixed(1) : r.toFixed(2)}×`;
}

/**
 * A two-agent loop that runs exactly `stages` stages (an even number): worker → checker
 * (always), checker → worker while its reply says `more: true`. The pipeline is the same
 * whatever the length; only the script (one more canned reply a round) changes.
 */
export function loopPipeline(stages) {
  if (stages % 2) throw new Error('loopPipeline needs an even number of stages');
  const rounds = stages / 2;
  const yaml = [
    'agents:',
    '  - id: worker',
    '    runtime: claude',
    '    system_prompt: "Work on: {{ input }}"',
    '    handoffs:',
    '      - to: checker',
    '        condition: always',
    '  - id: checker',
    '    runtime: claude',
    '    system_prompt: "Check: {{ input }}"',
    '    handoffs:',
    '      - to: worker',
    '        condition: "more == true"',
    '',
  ].join('\n');
  const checker = [
    ...Array.from({ length: rounds - 1 }, (_, i) => `round ${i + 1} checked\nmore: true`),
    `all checked\nmore: false`,
  ];
  // each round's work differs, as real work does (the same output three times in a row is
  // stopped by troupe's runaway guard)
  const worker = Array.from({ length: rounds }, (_, i) => `work done, round ${i + 1}.`);
  const script = { agents: { worker, checker }, gates: {}, human: {} };
  const scriptYaml = `${JSON.stringify(script)}\n`; // JSON is YAML
  return { yaml, script, scriptYaml };
}

/**
 * Writes a bench's own section of docs/benchmarks.md (`section` runs from `<!-- name:start -->` to
 * `<!-- name:end -->`): replaced where it is, appended otherwise.
 */
export function writeDocSection(name, section) {
  const doc = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'benchmarks.md');
  const old = existsSync(doc) ? readFileSync(doc, 'utf8') : '# Benchmarks\n';
  const re = new RegExp(`<!-- ${name}:start -->[\\s\\S]*?<!-- ${name}:end -->`);
  writeFileSync(
    doc,
    re.test(old) ? old.replace(re, () => section) : `${old.replace(/\n*$/, '\n\n')}${section}\n`,
  );
  return doc;
}
