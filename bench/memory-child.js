// Runs one n-stage task of the two-agent loop (bench/lib.js) through the API in this process,
// sampling memory after every stage.
// Run with --expose-gc: heap is also read after a full GC at a few stages. Prints JSON.
import { troupeChain } from './troupe-chain.js';

const stages = Number(process.argv[2] ?? 200);
const marks = new Set([1, 10, 25, 50, 100, 150, 200, stages].filter((s) => s <= stages));
const rss = [];
const heapAfterGc = {};
const chain = await troupeChain(stages, 'loop');
const { service, project } = chain.internals;
const id = service.start({
  pipeline: chain.internals.pipeline,
  input: 'bench',
  script: project.script,
  cwd: project.root,
});
const state = await service.continue(id, {
  onEvent(event) {
    if (event.type !== 'stage_completed') return;
    rss.push(process.memoryUsage().rss);
    if (marks.has(event.stage) && globalThis.gc) {
      globalThis.gc();
      heapAfterGc[event.stage] = process.memoryUsage().heapUsed;
    }
  },
});
chain.close();
if (state.status !== 'completed' || state.stages.length !== stages) {
  throw new Error(`task ended ${state.status} after ${state.stages.length} of ${stages} stages`);
}
process.stdout.write(
  JSON.stringify({ stages, rssAfterStage: rss, heapAfterGc, maxRssKb: process.resourceUsage().maxRSS }),
);
