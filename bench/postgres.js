// The PostgreSQL store's cost: per-stage overhead of the same 10-stage chain on PostgreSQL
// (127.0.0.1:5432, a schema of its own) and on SQLite, in this process, interleaved. Writes only
// its own section of docs/benchmarks.md. `npm run build` first.
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { fmtMs, fmtRatio, median } from './lib.js';
import { troupeChain } from './troupe-chain.js';

const quick = process.argv.includes('--quick');
// the machine is shared: how busy it was is part of the figure
const load = loadavg()[0];
const DOC = fileURLToPath(new URL('../docs/benchmarks.md', import.meta.url));
const URL_ = process.env.TROUPE_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const STAGES = 10;
const warmup = quick ? 3 : 10;
const runs = quick ? 8 : 40;
const log = (line) => process.stderr.write(`${line}\n`);

const { openPostgresStore } = await import(
  new URL('../dist/store/postgres/postgres-store.js', import.meta.url).href
);
const schemas = [`troupe_bench_${process.pid}`, `troupe_bench_${process.pid}_async`];
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
  openStore: () => openPostgresStore(URL_, { schema: schemas[0] }),
});
// SQLite's synchronous=NORMAL does not wait for the disk at each commit; PostgreSQL's default does
const asyncCommit = await troupeChain(STAGES, 'linear', {
  openStore: () => openPostgresStore(URL_, { schema: schemas[1], settings: { synchronous_commit: 'off' } }),
});
const chains = { sqlite, postgres, asyncCommit };
const times = { sqlite: [], postgres: [], asyncCommit: [] };
try {
  log(`  warm-up: ${warmup} runs each`);
  for (let i = 0; i < warmup; i++) for (const chain of Object.values(chains)) await chain.runOnce();
  log(`  measuring: ${runs} interleaved runs each`);
  const names = Object.keys(chains);
  for (let i = 0; i < runs; i++) {
    // rotate the order so no store always runs first
    for (let k = 0; k < names.length; k++) {
      const name = names[(i + k) % names.length];
      times[name].push((await chains[name].runOnce()).continueMs);
    }
  }
} finally {
  for (const chain of Object.values(chains)) chain.close();
  for (const schema of schemas) await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
}

// one round trip (SELECT 1) through the store's synchronous bridge against pg's own async client,
// interleaved in this process: what the bridge adds to every call
const { SyncPg } = await import(new URL('../dist/store/postgres/sync-client.js', import.meta.url).href);
const bridge = new SyncPg({ connection: { connectionString: URL_ }, answerTimeoutMs: 30_000 });
const direct = new pg.Client({ connectionString: URL_ });
await direct.connect();
const trips = { sync: [], async: [] };
const TRIPS = 200;
try {
  for (let round = 0; round < (quick ? 5 : 20); round++) {
    let t = performance.now();
    for (let i = 0; i < TRIPS; i++) bridge.query('SELECT 1');
    trips.sync.push((performance.now() - t) / TRIPS);
    t = performance.now();
    for (let i = 0; i < TRIPS; i++) await direct.query('SELECT 1');
    trips.async.push((performance.now() - t) / TRIPS);
  }
} finally {
  bridge.close();
  await direct.end();
}
const syncTrip = median(trips.sync.slice(1));
const asyncTrip = median(trips.async.slice(1));

const perStage = (xs) => median(xs) / STAGES;
const sqliteMs = perStage(times.sqlite);
const pgMs = perStage(times.postgres);
const ratio = pgMs / sqliteMs;
const asyncMs = perStage(times.asyncCommit);
const section = `<!-- postgres:start -->
## The PostgreSQL store

Written by \`node bench/postgres.js\` (after \`npm run build\`); ratios from one run.

- **Date:** ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}
- **Machine:** Node ${process.version}, ${cpus().length} cores, load average ${load.toFixed(1)} at the start
- **PostgreSQL:** ${serverVersion} on 127.0.0.1 (same machine), pg ${JSON.parse(readFileSync(new URL('../node_modules/pg/package.json', import.meta.url), 'utf8')).version}

| Figure | PostgreSQL | Baseline (same run) | Ratio | Target | Result |
| --- | --- | --- | --- | --- | --- |
| Overhead per stage, 10-stage linear pipeline | ${fmtMs(pgMs)} | same chain on SQLite: ${fmtMs(sqliteMs)} | ${fmtRatio(ratio)} | ≤ 3× | ${ratio <= 3 ? 'PASS' : 'FAIL'} |
| ⓘ Same, with \`synchronous_commit = off\` | ${fmtMs(asyncMs)} | same chain on SQLite: ${fmtMs(sqliteMs)} | ${fmtRatio(asyncMs / sqliteMs)} | — | info |
| ⓘ One round trip (\`SELECT 1\`) through the synchronous bridge | ${fmtMs(syncTrip)} | pg's async client, same process: ${fmtMs(asyncTrip)} | ${fmtRatio(syncTrip / asyncTrip)} | — | info |

**Method.** The overhead benchmark's troupe side (bench/troupe-chain.js: a 10-agent linear pipeline on the
scripted runtime, zero-latency replies, \`TaskService.continue\` ÷ 10), run in one process: once on
\`openSqliteStore\` (WAL, synchronous=NORMAL) and once on \`openPostgresStore\` in a fresh schema of the local
server (each call a round trip through the store's worker thread, \`sync-client.ts\`), and once more with the
sessions' \`synchronous_commit = off\`: like SQLite's synchronous=NORMAL, a commit then does not wait for the
disk (a crash of the server or the machine may lose the last commits, never corrupt). About one append commit
a stage; the provider windows read before each stage cost no round trip (LISTEN/NOTIFY). ${warmup} warm-up runs per
store, then ${runs} runs per store, interleaved (the order rotates); medians. A stage's cost is mostly its
commit: each \`troupe_append\` is one round trip, and the commit waits for the disk unless
\`synchronous_commit = off\`. The bridge's round trip is measured apart (rounds of ${TRIPS} calls, interleaved,
the first dropped, medians); it looks for the answer for 0.2 ms before sleeping on the futex, whose
sleep and wake-up cost more than a loopback query (0.65 ms a call without it, on this machine).
<!-- postgres:end -->`;

const old = readFileSync(DOC, 'utf8');
const re = /<!-- postgres:start -->[\s\S]*?<!-- postgres:end -->/;
writeFileSync(DOC, re.test(old) ? old.replace(re, section) : `${old.replace(/\n*$/, '\n\n')}${section}\n`);
log(
  `postgres ${fmtMs(pgMs)} a stage (${fmtMs(asyncMs)} with synchronous_commit off), sqlite ${fmtMs(sqliteMs)}: ${fmtRatio(ratio)}`,
);
