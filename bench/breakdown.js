// Diagnostic, not part of `bench/run.js`: where troupe's per-stage time goes. Runs the troupe
// side of the overhead benchmark three ways, interleaved in this process:
//   full         — as measured by the benchmark (SQLite file store, task files written)
//   no files     — the same, but TaskFiles.sync (context.md, agent_*.md) does nothing
//   no files+mem — also the store on an in-memory SQLite database (engine CPU only, roughly)
// The stubs are installed here, on the built classes; nothing in src/ changes.
import { join } from 'node:path';
import { makeProject, median, nowMs } from './lib.js';

const dist = (path) => import(new URL(`../dist/${path}`, import.meta.url).href);
const [{ openSqliteStore }, { loadPipeline }, { loadProjectConfig }, { projectTaskService }, { TaskFiles }] =
  await Promise.all([
    dist('store/sqlite/sqlite-store.js'),
    dist('pipeline/load.js'),
    dist('pipeline/config.js'),
    dist('app/project.js'),
    dist('store/task-files.js'),
  ]);

const stages = Number(process.env.STAGES ?? 10);
const runs = Number(process.env.RUNS ?? 40);
const noFiles = new Set();
const forTask = TaskFiles.forTask;
TaskFiles.forTask = (root, taskId) =>
  noFiles.has(root) ? { sync() {}, flushed: async () => {} } : forTask.call(TaskFiles, root, taskId);

function variant(name, { files, memory }) {
  const project = makeProject(`breakdown-${name.replace(/\W+/g, '')}`, stages);
  if (!files) noFiles.add(project.root);
  const store = openSqliteStore(memory ? ':memory:' : join(project.root, '.troupe', 'troupe.db'));
  const pipeline = loadPipeline(project.pipelineFile, { params: {}, name: 'bench' });
  const service = projectTaskService(project.root, store, loadProjectConfig(project.root));
  const times = [];
  return {
    name,
    times,
    async run() {
      const id = service.start({ pipeline, input: 'bench', script: project.script, cwd: project.root });
      const t0 = nowMs();
      const state = await service.continue(id);
      times.push(nowMs() - t0);
      if (state.status !== 'completed') throw new Error(`${name}: task ended ${state.status}`);
    },
  };
}

const variants = [
  variant('full', { files: true, memory: false }),
  variant('no files', { files: false, memory: false }),
  variant('no files+mem', { files: false, memory: true }),
];
for (let i = 0; i < 10; i++) for (const v of variants) await v.run();
for (const v of variants) v.times.length = 0;
for (let i = 0; i < runs; i++)
  for (let k = 0; k < variants.length; k++) await variants[(i + k) % variants.length].run();
const full = median(variants[0].times) / stages;
for (const v of variants) {
  const ms = median(v.times) / stages;
  console.log(`${v.name.padEnd(14)} ${ms.toFixed(3)} ms/stage  (${((100 * ms) / full).toFixed(0)}% of full)`);
}
