// Runs one n-stage task of the two-agent loop (bench/lib.js) through the API in this process,
// reading memory and the clock after every stage. Run with --expose-gc: the heap is also read
// after a full GC at a few stages. Prints JSON.
import { nowMs } from './lib.js';
import { troupeChain } from './troupe-chain.js';

const stages = Number(process.argv[2] ?? 800);
const marks = new Set([1, 50, 100, 200, 400, 600, 800, stages].filter((s) => s <= stages));
const rssAfterStage = [];
const msAfterStage = [];
const heapAfterGc = {};
const chain = await troupeChain(stages, 'loop');
const { service, project, pipeline } = chain.internals;
const id = service.start({ pipeline, input: 'bench', script: project.script, cwd: project.root });
let gcMs = 0;
const t0 = nowMs();
const state = await service.continue(id, {
  onEvent(event) {
    if (event.type !== 'stage_completed') return;
    rssAfterStage.push(process.memoryUsage().rss);
    msAfterStage.push(nowMs() - t0 - gcMs);
    if (marks.has(event.stage) && globalThis.gc) {
      const g = nowMs();
      globalThis.gc();
      heapAfterGc[event.stage] = process.memoryUsage().heapUsed;
      gcMs += nowMs() - g; // the forced GCs are left out of the stage times
    }
  },
});
chain.close();
if (state.status !== 'completed' || state.stages.length !== stages) {
  throw new Error(`task ended ${state.status} after ${state.stages.length} of ${stages} stages`);
}
process.stdout.write(
  JSON.stringify({
    stages,
    rssAfterStage,
    msAfterStage,
    heapAfterGc,
    maxRssKb: process.resourceUsage().maxRSS,
  }),
);
