// The PostgreSQL store's cost: per-stage overhead of the same 10-stage chain on PostgreSQL
// (127.0.0.1:5432, a schema of its own) and on SQLite, in this process, interleaved. Writes only
// its own section of docs/benchmarks.md. `npm run build` first.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { fmtMs, fmtRatio, median } from './lib.js';
import { troupeChain } from './troupe-chain.js';

const quick = process.argv.includes('--quick');
const DOC = fileURLToPath(new URL('../docs/benchmarks.md', import.meta.url));
const URL_ = process.env.TROUPE_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const STAGES = 10;
const warmup = quick ? 3 : 10;
const runs = quick ? 8 : 40;
const log = (line) => process.stderr.write(`${line}\n`);

const { openPostgresStore } = await import(
  new URL('../dist/store/postgres/postgres-store.js', import.meta.url).href
);
const schema = `troupe_bench_${process.pid}`;
const admin = async (sql) => {
  const client = new pg.Client({ connectionString: URL_ });
  await client.connect();
  try {
    const { rows } = await client.query(sql);
    return rows;
  } finally {
    await client.end();
  }
};
const [{ server_version: serverVersion }] = await admin('SHOW server_version');

const sqlite = await troupeChain(STAGES);
const postgres = await troupeChain(STAGES, 'linear', {
  openStore: () => openPostgresStore(URL_, { schema }),
});
const times = { sqlite: [], postgres: [] };
try {
  log(`  warm-up: ${warmup} runs each`);
  for (let i = 0; i < warmup; i++) {
    await sqlite.runOnce();
    await postgres.runOnce();
  }
  log(`  measuring: ${runs} interleaved runs each`);
  for (let i = 0; i < runs; i++) {
    const order =
      i % 2
        ? [
            ['sqlite', sqlite],
            ['postgres', postgres],
          ]
        : [
            ['postgres', postgres],
            ['sqlite', sqlite],
          ];
    for (const [name, chain] of order) times[name].push((await chain.runOnce()).continueMs);
  }
} finally {
  sqlite.close();
  postgres.close();
  await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
}

const perStage = (xs) => median(xs) / STAGES;
const sqliteMs = perStage(times.sqlite);
const pgMs = perStage(times.postgres);
const ratio = pgMs / sqliteMs;
const section = `<!-- postgres:start -->
## The PostgreSQL store

Written by \`node bench/postgres.js\` (after \`npm run build\`); ratios from one run.

- **Date:** ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}
- **PostgreSQL:** ${serverVersion} on 127.0.0.1 (same machine), pg ${JSON.parse(readFileSync(new URL('../node_modules/pg/package.json', import.meta.url), 'utf8')).version}

| Figure | PostgreSQL | Baseline (same run) | Ratio | Target | Result |
| --- | --- | --- | --- | --- | --- |
| Overhead per stage, 10-stage linear pipeline | ${fmtMs(pgMs)} | same chain on SQLite: ${fmtMs(sqliteMs)} | ${fmtRatio(ratio)} | ≤ 3× | ${ratio <= 3 ? 'PASS' : 'FAIL'} |

**Method.** The overhead benchmark's troupe side (bench/troupe-chain.js: a 10-agent linear pipeline on the
scripted runtime, zero-latency replies, \`TaskService.continue\` ÷ 10), run twice in one process: once on
\`openSqliteStore\` (WAL, synchronous=NORMAL) and once on \`openPostgresStore\` in a fresh schema of the local
server (each call a round trip through the store's worker thread, \`sync-client.ts\`). ${warmup} warm-up runs per
store, then ${runs} runs per store, interleaved (the order alternates); medians.
<!-- postgres:end -->`;

const old = readFileSync(DOC, 'utf8');
const re = /<!-- postgres:start -->[\s\S]*?<!-- postgres:end -->/;
writeFileSync(DOC, re.test(old) ? old.replace(re, section) : `${old.replace(/\n*$/, '\n\n')}${section}\n`);
log(`postgres ${fmtMs(pgMs)} a stage, sqlite ${fmtMs(sqliteMs)}: ${fmtRatio(ratio)}`);
