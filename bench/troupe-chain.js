// troupe's side of the overhead benchmark: tasks run in this process through the API
// (TaskService over the SQLite store), on the scripted runtime.
import { join } from 'node:path';
import { makeProject, nowMs } from './lib.js';

const dist = new URL('../dist/', import.meta.url);
const load = (path) => import(new URL(path, dist).href);

/**
 * A troupe project with an n-stage pipeline ('linear' or 'loop'); each runOnce is a new task in the
 * same store: SQLite in the project unless `openStore(root)` opens another (bench/postgres.js).
 */
export async function troupeChain(stages = 10, shape = 'linear', { openStore } = {}) {
  const [{ openSqliteStore }, { loadPipeline }, { loadProjectConfig }, { projectTaskService }] =
    await Promise.all([
      load('store/sqlite/sqlite-store.js'),
      load('pipeline/load.js'),
      load('pipeline/config.js'),
      load('app/project.js'),
    ]);
  const project = makeProject('overhead', stages, shape);
  const store = openStore
    ? await openStore(project.root)
    : openSqliteStore(join(project.root, '.troupe', 'troupe.db'));
  const pipeline = loadPipeline(project.pipelineFile, { params: {}, name: 'bench' });
  const service = projectTaskService(project.root, store, loadProjectConfig(project.root));
  return {
    stages,
    internals: { service, store, pipeline, project },
    /** Returns { startMs, continueMs } for one task from creation to completion. */
    async runOnce() {
      const t0 = nowMs();
      const id = service.start({ pipeline, input: 'bench', script: project.script, cwd: project.root });
      const t1 = nowMs();
      const state = await service.continue(id);
      const t2 = nowMs();
      if (state.status !== 'completed' || state.stages.length !== stages) {
        throw new Error(
          `troupe task ${id} ended ${state.status} after ${state.stages.length} of ${stages} stages`,
        );
      }
      return { startMs: t1 - t0, continueMs: t2 - t1 };
    },
    close() {
      store.close();
    },
  };
}
