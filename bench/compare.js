// Diagnostic, not part of `bench/run.js`: two builds of troupe side by side in the same run, for a
// before/after that the machine's load cannot fake. Each argument is a copy of the package root
// with its dist/ and bin/ built (e.g. `cp -r dist bin package.json /tmp/before/` and a symlink to
// node_modules, before the change). Prints, for each: the time a stage (the overhead benchmark's
// troupe side, in blocks of 50 runs so that one build's background file writes stay in its own
// block), `troupe validate` of a 10-agent pipeline and `troupe --version` against `node -e 0`
// (interleaved spawns).
//   node bench/compare.js /tmp/before /tmp/after
// With `--write "<what changed>"` (two builds), it also writes its section of docs/benchmarks.md:
// each figure of the second build as a ratio of the first's, measured side by side.
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeProject, median, nowMs, writeDocSection } from './lib.js';

const args = process.argv.slice(2);
const writeAt = args.indexOf('--write');
const change = writeAt >= 0 ? args.splice(writeAt, 2)[1] : null;
const roots = args.map((r) => resolve(r));
const stages = 10;
const blocks = Number(process.env.BLOCKS ?? 8);

async function chain(root) {
  const load = (path) => import(pathToFileURL(join(root, 'dist', path)).href);
  const [{ openSqliteStore }, { loadPipeline }, { loadProjectConfig }, projectTaskService] =
    await Promise.all([
      load('store/sqlite/sqlite-store.js'),
      load('pipeline/load.js'),
      load('pipeline/config.js'),
      // builds from before the composition root moved to app/ made the TaskService themselves
      load('app/project.js').then(
        (m) => m.projectTaskService,
        () =>
          load('engine/task-service.js').then(
            (m) =>
              (...args) =>
                new m.TaskService(...args),
          ),
      ),
    ]);
  const project = makeProject('compare', stages);
  const store = openSqliteStore(join(project.root, '.troupe', 'troupe.db'));
  const pipeline = loadPipeline(project.pipelineFile, { params: {}, name: 'bench' });
  const service = projectTaskService(project.root, store, loadProjectConfig(project.root));
  const times = [];
  return {
    times,
    async run() {
      const id = service.start({ pipeline, input: 'bench', script: project.script, cwd: project.root });
      const t0 = nowMs();
      const state = await service.continue(id);
      times.push(nowMs() - t0);
      if (state.status !== 'completed') throw new Error(`${root}: task ended ${state.status}`);
    },
  };
}

const chains = await Promise.all(roots.map(chain));
for (let i = 0; i < 20; i++) for (const c of chains) await c.run();
for (const c of chains) c.times.length = 0;
for (let b = 0; b < blocks; b++)
  for (let k = 0; k < chains.length; k++)
    for (let i = 0; i < 50; i++) await chains[(b + k) % chains.length].run();

const project = makeProject('compare-startup', stages);
const cases = [
  ['node -e 0', ['-e', '0']],
  ...roots.map((r) => [r, [join(r, 'bin', 'troupe.js'), 'validate', project.pipelineFile]]),
  ...roots.map((r) => [r, [join(r, 'bin', 'troupe.js'), '--version']]),
];
const spawned = cases.map(() => []);
for (let i = 0; i < 32; i++) {
  for (let k = 0; k < cases.length; k++) {
    const n = (i + k) % cases.length;
    const t0 = nowMs();
    const r = spawnSync(process.execPath, cases[n][1], { cwd: project.root, stdio: 'ignore' });
    if (r.status !== 0) throw new Error(`${cases[n][0]} exited ${r.status}`);
    if (i >= 2) spawned[n].push(nowMs() - t0);
  }
}
const node = median(spawned[0]);
console.log(`node -e 0: ${node.toFixed(1)} ms`);
const figures = roots.map((root, i) => {
  const figure = {
    stage: median(chains[i].times) / stages,
    validate: median(spawned[i + 1]),
    version: median(spawned[i + 1 + roots.length]),
  };
  console.log(
    `${root}: ${figure.stage.toFixed(4)} ms a stage; validate ${figure.validate.toFixed(1)} ms (${(figure.validate / node).toFixed(2)}× node); --version ${figure.version.toFixed(1)} ms (${(figure.version / node).toFixed(2)}× node)`,
  );
  return figure;
});
if (change && figures.length === 2) {
  const [before, after] = figures;
  const row = (name, key, digits) =>
    `| ${name} | ${before[key].toFixed(digits)} ms | ${after[key].toFixed(digits)} ms | ${(after[key] / before[key]).toFixed(2)}× |`;
  writeDocSection(
    'compare',
    [
      '<!-- compare:start -->',
      '## Before and after a change (`bench/compare.js`)',
      '',
      `${change}. Both builds side by side in one run (interleaved), on Node ${process.version}; \`node -e 0\`: ${node.toFixed(1)} ms.`,
      '',
      '| Figure | before | after | after ÷ before |',
      '| --- | --- | --- | --- |',
      row('Overhead per stage, 10-stage pipeline', 'stage', 4),
      row('`troupe validate` (10 agents), wall', 'validate', 1),
      row('`troupe --version`, wall', 'version', 1),
      '<!-- compare:end -->',
    ].join('\n'),
  );
}
process.exit(0);
