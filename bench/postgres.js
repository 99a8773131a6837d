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

// the store's round trips, counted on the bridge every PostgreSQL store goes through
const { SyncPg } = await import(new URL('../dist/store/postgres/sync-client.js', import.meta.url).href);
let roundTrips = 0;
const call = SyncPg.prototype.call;
SyncPg.prototype.call = function (...args) {
  // hold and drop stay in the bridge's thread
  if (args[0].op !== 'hold' && args[0].op !== 'drop') roundTrips++;
  return call.apply(this, args);
};

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
const tripsPerStage = [];
try {
  log(`  warm-up: ${warmup} runs each`);
  for (let i = 0; i < warmup; i++) for (const chain of Object.values(chains)) await chain.runOnce();
  log(`  measuring: ${runs} interleaved runs each`);
  const names = Object.keys(chains);
  for (let i = 0; i < runs; i++) {
    // rotate the order so no store always runs first
    for (let k = 0; k < names.length; k++) {
      const name = names[(i + k) % names.length];
      const before = roundTrips;
      times[name].push((await chains[name].runOnce()).continueMs);
      if (name === 'postgres') tripsPerStage.push((roundTrips - before) / STAGES);
    }
  }
} finally {
  for (const chain of Object.values(chains)) chain.close();
  for (const schema of schemas) await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
}

// one round trip (SELECT 1) through the store's synchronous bridge against pg's own async client,
// interleaved in this process: what the bridge adds to every call; and the bridge's round trip
// when the caller works between calls, as the engine does between a chain's stages (the threads
// then fall asleep between trips, and each of the four wake-ups a trip takes costs)
const bridge = new SyncPg({ connection: { connectionString: URL_ }, answerTimeoutMs: 30_000 });
const direct = new pg.Client({ connectionString: URL_ });
await direct.connect();
const trips = { sync: [], async: [], apart: [] };
const work = (ms) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};
const TRIPS = 200;
try {
  for (let round = 0; round < (quick ? 5 : 20); round++) {
    let t = performance.now();
    for (let i = 0; i < TRIPS; i++) bridge.query('SELECT 1');
    trips.sync.push((performance.now() - t) / TRIPS);
    t = performance.now();
    for (let i = 0; i < TRIPS; i++) await direct.query('SELECT 1');
    trips.async.push((performance.now() - t) / TRIPS);
    let apart = 0;
    for (let i = 0; i < TRIPS; i++) {
      work(0.3);
      t = performance.now();
      bridge.query('SELECT 1');
      apart += performance.now() - t;
    }
    trips.apart.push(apart / TRIPS);
  }
} finally {
  bridge.close();
  await direct.end();
}
const syncTrip = median(trips.sync.slice(1));
const asyncTrip = median(trips.async.slice(1));
const apartTrip = median(trips.apart.slice(1));

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
| ⓘ Round trips to the database per stage (appends, reads, leases) | ${median(tripsPerStage).toFixed(2)} | — | — | — | info |
| ⓘ One round trip (\`SELECT 1\`) through the synchronous bridge | ${fmtMs(syncTrip)} | pg's async client, same process: ${fmtMs(asyncTrip)} | ${fmtRatio(syncTrip / asyncTrip)} | — | info |
| ⓘ Same, with 0.3 ms of work between calls (as between a chain's stages) | ${fmtMs(apartTrip)} | back to back: ${fmtMs(syncTrip)} | ${fmtRatio(apartTrip / syncTrip)} | — | info |

**Method.** The overhead benchmark's troupe side (bench/troupe-chain.js: a 10-agent linear pipeline on the
scripted runtime, zero-latency replies, \`TaskService.continue\` ÷ 10), run in one process: once on
\`openSqliteStore\` (WAL, synchronous=NORMAL) and once on \`openPostgresStore\` in a fresh schema of the local
server (each call a round trip through the store's worker thread, \`sync-client.ts\`), and once more with the
sessions' \`synchronous_commit = off\`: like SQLite's synchronous=NORMAL, a commit then does not wait for the
disk (a crash of the server or the machine may lose the last commits, never corrupt). About one append commit
a stage; the provider windows read before each stage cost no round trip (LISTEN/NOTIFY). ${warmup} warm-up runs per
store, then ${runs} runs per store, interleaved (the order rotates); medians; the round trips are counted on
the bridge during the PostgreSQL runs. The bridge's round trip is measured apart (rounds of ${TRIPS} calls,
interleaved, the first dropped, medians).

**Where a stage's time goes** (measured once by hand, 2026-12-02, and why the ≤ 3× target is not met here):
one append a stage (\`troupe_append\`: three events, the lease check, the task's row, the notification, the
commit), and its round trip is what remains. Through libpq with the same 0.3 ms pause between calls
(\`pgbench -M prepared\` with \`\\sleep 300 us\`, this function, this server) the append takes 0.53 ms, 0.35 ms with
\`synchronous_commit = off\`, and a bare three-row insert 0.29 ms; back to back the insert takes 0.16 ms. The
pause is what costs: between a chain's stages the threads involved (this one, the bridge's worker, the
server's backend) fall asleep, and waking each again costs more than the query on this 2-core VM, as the last
row shows for \`SELECT 1\`. The bridge adds about 0.5 ms more to the append (two thread hops of its own).
Spinning longer before sleeping was tried (0 to 2 ms, on either side): no better, as on two cores the spin
takes the core the other threads need. What was done: statements prepared once per connection (the task's
summary read 1.1 → 0.6 ms), the summary kept on the task's row by the writes (migration 3; a PK lookup, no
event scan), a lease taken in one round trip, and the append's row lock on the lease, foreign-key check per
event and statement trigger replaced by the write lock it already takes (migration 3): 10.2× → about 5×.
Closer would need no thread hop at all (a native synchronous client) or an engine that does not wait for its
appends; neither is worth its cost next to a stage of a real agent (seconds).
<!-- postgres:end -->`;

const old = readFileSync(DOC, 'utf8');
const re = /<!-- postgres:start -->[\s\S]*?<!-- postgres:end -->/;
writeFileSync(DOC, re.test(old) ? old.replace(re, section) : `${old.replace(/\n*$/, '\n\n')}${section}\n`);
log(
  `postgres ${fmtMs(pgMs)} a stage (${fmtMs(asyncMs)} with synchronous_commit off), sqlite ${fmtMs(sqliteMs)}: ${fmtRatio(ratio)}`,
);
