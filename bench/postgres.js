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
const { NativePg, libpqConninfo, loadLibpq } = await import(
  new URL('../dist/store/postgres/native-pg.js', import.meta.url).href
);
const Libpq = loadLibpq();
if (!Libpq) throw new Error('the libpq package is not installed (apt install libpq-dev, then npm ci)');
const schemas = ['native', 'bridge', 'async'].map((name) => `troupe_bench_${process.pid}_${name}`);
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

// the store's round trips: every query and transaction step goes through SyncPg, whichever client sends it
const { SyncPg } = await import(new URL('../dist/store/postgres/sync-client.js', import.meta.url).href);
let roundTrips = 0;
/** Time spent waiting in those calls, in ms. */
let inCalls = 0;
for (const method of ['query', 'step']) {
  const original = SyncPg.prototype[method];
  SyncPg.prototype[method] = function (...args) {
    roundTrips++;
    const start = performance.now();
    try {
      return original.apply(this, args);
    } finally {
      inCalls += performance.now() - start;
    }
  };
}

const { openMemoryStore } = await import(new URL('../dist/store/memory-store.js', import.meta.url).href);
const chains = {
  sqlite: await troupeChain(STAGES),
  // no database at all: what the engine itself costs a stage, which no store can take away
  memory: await troupeChain(STAGES, 'linear', { openStore: () => openMemoryStore() }),
  native: await troupeChain(STAGES, 'linear', {
    openStore: () => openPostgresStore(URL_, { schema: schemas[0], client: 'native' }),
  }),
  bridge: await troupeChain(STAGES, 'linear', {
    openStore: () => openPostgresStore(URL_, { schema: schemas[1], client: 'bridge' }),
  }),
  // SQLite's synchronous=NORMAL does not wait for the disk at each commit; PostgreSQL's default does
  asyncCommit: await troupeChain(STAGES, 'linear', {
    openStore: () =>
      openPostgresStore(URL_, {
        schema: schemas[2],
        client: 'native',
        settings: { synchronous_commit: 'off' },
      }),
  }),
};
const times = Object.fromEntries(Object.keys(chains).map((name) => [name, []]));
const tripsPerStage = [];
/** Per chain, the time its stages spent in the database's calls, per stage. */
const callMs = { native: [], asyncCommit: [] };
try {
  log(`  warm-up: ${warmup} runs each`);
  for (let i = 0; i < warmup; i++) for (const chain of Object.values(chains)) await chain.runOnce();
  log(`  measuring: ${runs} interleaved runs each`);
  const names = Object.keys(chains);
  for (let i = 0; i < runs; i++) {
    // rotate the order so no store always runs first
    for (let k = 0; k < names.length; k++) {
      const name = names[(i + k) % names.length];
      const [trips, waited] = [roundTrips, inCalls];
      times[name].push((await chains[name].runOnce()).continueMs);
      if (name === 'native') tripsPerStage.push((roundTrips - trips) / STAGES);
      callMs[name]?.push((inCalls - waited) / STAGES);
    }
  }
} finally {
  for (const chain of Object.values(chains)) chain.close();
  for (const schema of schemas) await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
}

// one round trip (SELECT 1) through each synchronous client against pg's own async client,
// interleaved in this process; and each one's round trip when the caller works between calls, as
// the engine does between a chain's stages (threads that fell asleep between trips must be woken)
const native = new NativePg(Libpq, libpqConninfo(URL_, {}));
const bridge = new SyncPg({ connection: { connectionString: URL_ }, answerTimeoutMs: 30_000 });
const direct = new pg.Client({ connectionString: URL_ });
await direct.connect();
const trips = { native: [], bridge: [], async: [], nativeApart: [], bridgeApart: [] };
const work = (ms) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};
const TRIPS = 200;
const backToBack = (client) => {
  const t = performance.now();
  for (let i = 0; i < TRIPS; i++) client.query('SELECT 1');
  return (performance.now() - t) / TRIPS;
};
const apart = (client) => {
  let sum = 0;
  for (let i = 0; i < TRIPS; i++) {
    work(0.3);
    const t = performance.now();
    client.query('SELECT 1');
    sum += performance.now() - t;
  }
  return sum / TRIPS;
};
try {
  for (let round = 0; round < (quick ? 5 : 20); round++) {
    trips.native.push(backToBack(native));
    trips.bridge.push(backToBack(bridge));
    const t = performance.now();
    for (let i = 0; i < TRIPS; i++) await direct.query('SELECT 1');
    trips.async.push((performance.now() - t) / TRIPS);
    trips.nativeApart.push(apart(native));
    trips.bridgeApart.push(apart(bridge));
  }
} finally {
  native.close();
  bridge.close();
  await direct.end();
}
const trip = Object.fromEntries(Object.entries(trips).map(([name, xs]) => [name, median(xs.slice(1))]));

const perStage = (xs) => median(xs) / STAGES;
const sqliteMs = perStage(times.sqlite);
const nativeMs = perStage(times.native);
const bridgeMs = perStage(times.bridge);
const asyncMs = perStage(times.asyncCommit);
const engineMs = perStage(times.memory);
const ratio = nativeMs / sqliteMs;
// within 3x, what is left for the database a stage once the engine's own work is paid
const budgetMs = 3 * sqliteMs - engineMs;
const [inCallsMs, inCallsAsyncMs] = [median(callMs.native), median(callMs.asyncCommit)];
const libpqVersion = JSON.parse(
  readFileSync(new URL('../node_modules/libpq/package.json', import.meta.url), 'utf8'),
).version;
const section = `<!-- postgres:start -->
## The PostgreSQL store

Written by \`node bench/postgres.js\` (after \`npm run build\`); ratios from one run.

- **Date:** ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}
- **Machine:** Node ${process.version}, ${cpus().length} cores, load average ${load.toFixed(1)} at the start
- **PostgreSQL:** ${serverVersion} on 127.0.0.1 (same machine), libpq ${libpqVersion} (node package), pg ${JSON.parse(readFileSync(new URL('../node_modules/pg/package.json', import.meta.url), 'utf8')).version}

| Figure | PostgreSQL | Baseline (same run) | Ratio | Target | Result |
| --- | --- | --- | --- | --- | --- |
| Overhead per stage, 10-stage linear pipeline (libpq, the default client) | ${fmtMs(nativeMs)} | same chain on SQLite: ${fmtMs(sqliteMs)} | ${fmtRatio(ratio)} | ≤ 3× | ${ratio <= 3 ? 'PASS' : 'FAIL'} |
| ⓘ Same, through the bridge (\`TROUPE_PG_CLIENT=bridge\`) | ${fmtMs(bridgeMs)} | same chain on SQLite: ${fmtMs(sqliteMs)} | ${fmtRatio(bridgeMs / sqliteMs)} | — | info |
| ⓘ Same, libpq with \`synchronous_commit = off\` | ${fmtMs(asyncMs)} | same chain on SQLite: ${fmtMs(sqliteMs)} | ${fmtRatio(asyncMs / sqliteMs)} | — | info |
| ⓘ The engine alone (the in-memory store, no database) | ${fmtMs(engineMs)} | same chain on SQLite: ${fmtMs(sqliteMs)} | ${fmtRatio(engineMs / sqliteMs)} | — | info |
| ⓘ Round trips to the database per stage (appends, reads, leases) | ${median(tripsPerStage).toFixed(2)} | — | — | — | info |
| ⓘ Time a stage waits in those round trips (libpq) | ${fmtMs(inCallsMs)} | what 3× leaves the database a stage (3 × SQLite − the engine alone): ${fmtMs(budgetMs)} | ${fmtRatio(inCallsMs / budgetMs)} | — | info |
| ⓘ Same, with \`synchronous_commit = off\` | ${fmtMs(inCallsAsyncMs)} | the same budget: ${fmtMs(budgetMs)} | ${fmtRatio(inCallsAsyncMs / budgetMs)} | — | info |
| ⓘ One round trip (\`SELECT 1\`) through libpq, back to back | ${fmtMs(trip.native)} | pg's async client, same process: ${fmtMs(trip.async)} | ${fmtRatio(trip.native / trip.async)} | — | info |
| ⓘ Same, through the bridge | ${fmtMs(trip.bridge)} | pg's async client, same process: ${fmtMs(trip.async)} | ${fmtRatio(trip.bridge / trip.async)} | — | info |
| ⓘ libpq, with 0.3 ms of work between calls (as between a chain's stages) | ${fmtMs(trip.nativeApart)} | back to back: ${fmtMs(trip.native)} | ${fmtRatio(trip.nativeApart / trip.native)} | — | info |
| ⓘ The bridge, with 0.3 ms of work between calls | ${fmtMs(trip.bridgeApart)} | libpq, same: ${fmtMs(trip.nativeApart)} | ${fmtRatio(trip.bridgeApart / trip.nativeApart)} | — | info |

**Method.** The overhead benchmark's troupe side (bench/troupe-chain.js: a 10-agent linear pipeline on the
scripted runtime, zero-latency replies, \`TaskService.continue\` ÷ 10), run in one process on five stores, each
in a fresh schema of the local server where it is PostgreSQL: \`openMemoryStore\` (no database: the engine's own
cost); \`openSqliteStore\` (WAL, synchronous=NORMAL);
\`openPostgresStore\` with libpq ${libpqVersion} on the calling thread (native-pg.ts, the default where the
\`libpq\` package is installed); the same through the bridge (\`pg\` in a worker thread, sync-client.ts); and libpq
with the sessions' \`synchronous_commit = off\`: like SQLite's synchronous=NORMAL, a commit then does not wait for
the disk (a crash of the server or the machine may lose the last commits, never corrupt). About one append commit
a stage; the provider windows read before each stage cost no round trip (LISTEN/NOTIFY). ${warmup} warm-up runs per
store, then ${runs} runs per store, interleaved (the order rotates); medians; the round trips are counted on
\`SyncPg\` (queries and transaction steps) during the libpq runs. The clients' round trips are measured apart
(rounds of ${TRIPS} calls, interleaved, the first dropped, medians).

**Where a stage's time goes, and why the ≤ 3× target is not met here.** About ${median(tripsPerStage).toFixed(1)} round trips
a stage, 1.1 of them appends (N + 1 appends for N stages: the executor flushes a stage's completion, its handoff
and the next stage's start in one transaction, and must, since each stage's output is in the store before the next
runtime starts and a worker whose lease was taken over is refused before it touches the worktree again). SQLite
answers those in the calling thread; PostgreSQL is another process, and on a 2-core machine each trip wakes it and
then this one. The engine alone costs ${fmtMs(engineMs)} a stage, so 3× SQLite leaves the database ${fmtMs(budgetMs)}
a stage, and the stage waits ${fmtMs(inCallsMs)} in its round trips alone (${fmtMs(inCallsAsyncMs)} when the commit does not wait
for the disk): each wakes the server's process, which takes the task's write lock, checks the lease's epoch, inserts
the events, updates the task's row, notifies and commits. A bare \`SELECT 1\`, woken the same way, is ${fmtMs(trip.nativeApart)}. What is left to take away is not work but
guarantees: the wait for the disk (\`synchronous_commit = off\`, a durability choice left to operators:
docs/distributed.md, "Durability and speed"), which brings the ratio to ${fmtRatio(asyncMs / sqliteMs)}${asyncMs / sqliteMs > 3 ? ', still over 3×,' : ''} and the wait for the append
before the next stage starts, which would give up the fencing above.
The ratio also moves with the machine: a busy one slows the engine's share, which both stores pay, so the ratio
falls (3.97× at load 1.9 on 2026-12-02, against 0.440 ms for SQLite). Earlier steps: statements prepared once per
connection, the summary kept on the task's row (migration 3), a lease taken in one round trip, the append's row
lock, foreign-key check per event and statement trigger replaced by the write lock it already takes: 10.2× → 5.1×
(bridge), then libpq.
<!-- postgres:end -->`;

const old = readFileSync(DOC, 'utf8');
const re = /<!-- postgres:start -->[\s\S]*?<!-- postgres:end -->/;
writeFileSync(DOC, re.test(old) ? old.replace(re, section) : `${old.replace(/\n*$/, '\n\n')}${section}\n`);
log(
  `postgres ${fmtMs(nativeMs)} a stage (bridge ${fmtMs(bridgeMs)}, ${fmtMs(asyncMs)} with synchronous_commit off), sqlite ${fmtMs(sqliteMs)}: ${fmtRatio(ratio)}`,
);
