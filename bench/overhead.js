// Target 1: orchestration overhead per stage, troupe vs LangGraph JS, same process, interleaved.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { langGraphChain } from './langgraph-chain.js';
import { median, nowMs, quantile, tempDir } from './lib.js';
import { troupeChain } from './troupe-chain.js';

/**
 * A machine-speed reference measured in the same process: one small event row
 * committed in its own transaction (WAL, synchronous=NORMAL, on the same disk) — the
 * unit of work troupe does a few times per stage.
 */
function rawCommitMs(count = 3000) {
  const db = new Database(join(tempDir('raw'), 'raw.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(
    'CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, task_id TEXT, type TEXT, at TEXT, data TEXT)',
  );
  const insert = db.prepare('INSERT INTO events (task_id, type, at, data) VALUES (?, ?, ?, ?)');
  const commit = db.transaction((i) =>
    insert.run(
      'T-BENCH',
      'stage_completed',
      new Date().toISOString(),
      JSON.stringify({ stage: i, output: 'output of step: done.' }),
    ),
  );
  for (let i = 0; i < 300; i++) commit(i);
  const t0 = nowMs();
  for (let i = 0; i < count; i++) commit(i);
  const ms = (nowMs() - t0) / count;
  db.close();
  return ms;
}

export async function measureOverhead({ stages = 10, warmup = 10, runs = 30, log = () => {} } = {}) {
  const troupe = await troupeChain(stages);
  // primary baseline: the same durability as troupe (each checkpoint committed before the
  // next node; SQLite synchronous=NORMAL, as troupe's store uses)
  const lgSync = langGraphChain(tempDir('langgraph'), {
    nodes: stages,
    durability: 'sync',
    synchronous: 'NORMAL',
  });
  // for information: LangGraph's defaults (durability 'async'; a new file's connection keeps synchronous=FULL)
  const lgDefault = langGraphChain(tempDir('langgraph-default'), { nodes: stages, durability: 'async' });

  log(`  warm-up: ${warmup} runs each`);
  for (let i = 0; i < warmup; i++) {
    await troupe.runOnce();
    await lgSync.runOnce();
    await lgDefault.runOnce();
  }
  const t = { start: [], cont: [], lg: [], lgDefault: [] };
  log(`  measuring: ${runs} interleaved runs each`);
  for (let i = 0; i < runs; i++) {
    // rotate the order so neither side always runs first
    const order = [
      async () => {
        const r = await troupe.runOnce();
        t.start.push(r.startMs);
        t.cont.push(r.continueMs);
      },
      async () => t.lg.push(await lgSync.runOnce()),
      async () => t.lgDefault.push(await lgDefault.runOnce()),
    ];
    for (let k = 0; k < order.length; k++) await order[(i + k) % order.length]();
  }
  troupe.close();
  lgSync.close();
  lgDefault.close();
  const raw = rawCommitMs();

  const perStage = (xs) => median(xs) / stages;
  const both = t.start.map((s, i) => s + t.cont[i]);
  return {
    stages,
    runs,
    warmup,
    troupeStage: perStage(t.cont),
    troupeStageP90: quantile(t.cont, 0.9) / stages,
    troupeStartAndStage: perStage(both),
    troupeStartMs: median(t.start),
    langGraphNode: perStage(t.lg),
    langGraphNodeP90: quantile(t.lg, 0.9) / stages,
    langGraphDefaultNode: perStage(t.lgDefault),
    rawCommitMs: raw,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const runs = Number(process.env.RUNS ?? 30);
  const r = await measureOverhead({ runs, log: console.log });
  console.log(r);
  console.log(
    `troupe ${r.troupeStage.toFixed(3)} ms/stage, langgraph ${r.langGraphNode.toFixed(3)} ms/node, ratio ${(r.langGraphNode / r.troupeStage).toFixed(2)}`,
  );
}
