// The message bus (docs/bus.md) against the floor of a durable Maildir delivery, in one run on
// one disk: `node bench/bus.js` after the build. Updates its own section of docs/benchmarks.md
// (between the bus:start / bus:end markers) and leaves the rest of the file alone.
// Options: --quick (fewer runs, 10,000 history instead of 100,000), --no-write (print only).
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBus } from '../dist/bus/bus.js';
import { newReceipt } from '../dist/bus/receipts.js';
import { median, nowMs, quantile, tempDir } from './lib.js';

const quick = process.argv.includes('--quick');
const DOC = fileURLToPath(new URL('../docs/benchmarks.md', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/troupe.js', import.meta.url));
const log = (line) => process.stderr.write(`${line}\n`);
const SEND_RUNS = quick ? 200 : 1000;
const HISTORY = quick ? 10_000 : 100_000;
const DRAIN_TRIALS = quick ? 8 : 25;
const CLI_RUNS = quick ? 5 : 15;
const BODY = 'Please review internal/cli/send.go: the retry path drops the last error.\n';

function settle() {
  spawnSync('sync', { stdio: 'ignore' });
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, quick ? 200 : 2000);
}

function fsyncDir(dir) {
  const fd = openSync(dir, 'r');
  fsyncSync(fd);
  closeSync(fd);
}

/**
 * One Maildir delivery and nothing else: write a temp file, fsync it, rename it into new/, with
 * tmp/ fsynced before the rename and new/ after it as asked.
 */
function deliverOnce(dir, name, bytes, { syncTmp, syncNew }) {
  const tmp = join(dir, 'tmp', name);
  const fd = openSync(tmp, 'wx', 0o600);
  writeSync(fd, bytes);
  fsyncSync(fd);
  closeSync(fd);
  if (syncTmp) fsyncDir(join(dir, 'tmp'));
  renameSync(tmp, join(dir, 'new', `${name}.md`));
  if (syncNew) fsyncDir(join(dir, 'new'));
}

function measureSend() {
  const floorDir = tempDir('bus-floor');
  mkdirSync(join(floorDir, 'tmp'));
  mkdirSync(join(floorDir, 'new'));
  const bus = openBus(join(tempDir('bus-send'), '.agent-mail'));
  bus.init(['claude', 'codex']);
  const input = { from: 'claude', to: 'codex', subject: 'Review needed', kind: 'review_request', body: BODY };
  // the floors write as many bytes as a real message
  const bytes = readFileSync(join(bus.mailbox('codex').inboxNew, `${bus.send(input).id}.md`));
  const sides = {
    // the floor: the least a durable delivery does (the delivered name survives a power cut)
    floor: (i) => deliverOnce(floorDir, `f${i}`, bytes, { syncTmp: false, syncNew: true }),
    send: () => bus.send(input),
    // the wording taken in order: tmp/ fsynced before the rename, new/ never
    tmpSynced: (i) => deliverOnce(floorDir, `t${i}`, bytes, { syncTmp: true, syncNew: false }),
    // AMQ's own sequence: both
    amq: (i) => deliverOnce(floorDir, `a${i}`, bytes, { syncTmp: true, syncNew: true }),
  };
  const times = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
  for (let i = 0; i < 20; i++) for (const run of Object.values(sides)) run(`w${i}`);
  // Interleaved in blocks of 10, so every side sees the same disk weather.
  for (let i = 0; i < SEND_RUNS; i += 10) {
    for (const [key, run] of Object.entries(sides)) {
      for (let k = 0; k < 10; k++) {
        const t0 = nowMs();
        run(i + k);
        times[key].push(nowMs() - t0);
      }
    }
  }
  return {
    bytes: bytes.length,
    floor: median(times.floor),
    tmpSynced: median(times.tmpSynced),
    amq: median(times.amq),
    send: median(times.send),
    sendP95: quantile(times.send, 0.95),
    floorP95: quantile(times.floor, 0.95),
  };
}

/**
 * The floors again in C (bench/bus-floor.c), beside the bus's syscalls with no JavaScript at all:
 * what the protocol costs, apart from the code around it. Skipped when there is no C compiler.
 */
function measureInC(bytes) {
  const dir = tempDir('bus-c');
  const bin = join(dir, 'bus-floor');
  const cc = spawnSync('cc', ['-O2', '-o', bin, fileURLToPath(new URL('bus-floor.c', import.meta.url))], {
    encoding: 'utf8',
  });
  if (cc.error || cc.status !== 0) {
    log(`  no C floor: ${cc.error?.message ?? cc.stderr.trim()}`);
    return undefined;
  }
  const run = spawnSync(bin, [dir, String(SEND_RUNS), String(bytes)], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`bus-floor: exit ${run.status}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/** A root whose inbox already holds `n` read messages (in cur/, each with its drained receipt). */
function busWithHistory(n) {
  const bus = openBus(join(tempDir('bus-history'), '.agent-mail'));
  bus.init(['claude', 'codex']);
  if (n === 0) return bus;
  const box = bus.mailbox('codex');
  const sent = bus.send({ from: 'claude', to: 'codex', subject: 'old', body: BODY });
  const template = readFileSync(join(box.inboxNew, `${sent.id}.md`), 'utf8');
  bus.drain('codex');
  for (let i = 0; i < n; i++) {
    const id = `2020-01-01T00-00-00.000Z_pid1_${i.toString(16).padStart(8, '0')}`;
    writeFileSync(join(box.inboxCur, `${id}.md`), template.replaceAll(sent.id, id), { mode: 0o600 });
    const r = newReceipt({
      msg_id: id,
      thread: 'p2p/claude__codex',
      sender: 'claude',
      consumer: 'codex',
      stage: 'drained',
    });
    writeFileSync(join(box.receipts, `${id}__codex__drained.json`), `${JSON.stringify(r, null, 2)}\n`, {
      mode: 0o600,
    });
  }
  return bus;
}

function measureDrain() {
  log(`  building an inbox with ${HISTORY.toLocaleString('en')} read messages`);
  const empty = busWithHistory(0);
  const full = busWithHistory(HISTORY);
  settle();
  const times = { empty: [], full: [] };
  const once = (bus, key) => {
    for (let i = 0; i < 20; i++) bus.send({ from: 'claude', to: 'codex', subject: `m${i}`, body: BODY });
    const t0 = nowMs();
    const items = bus.drain('codex', { limit: 20 });
    times[key].push(nowMs() - t0);
    if (items.length !== 20) throw new Error(`drained ${items.length}, not 20`);
  };
  for (let i = 0; i < 3; i++) {
    once(empty, 'empty');
    once(full, 'full');
  }
  times.empty.length = 0;
  times.full.length = 0;
  for (let i = 0; i < DRAIN_TRIALS; i++) {
    const order = i % 2 ? ['empty', 'full'] : ['full', 'empty'];
    for (const key of order) once(key === 'empty' ? empty : full, key);
  }
  return { empty: median(times.empty), full: median(times.full) };
}

function measureCli() {
  const dir = tempDir('bus-cli');
  const root = join(dir, '.agent-mail');
  openBus(root).init(['claude', 'codex']);
  const time = (args) => {
    const t0 = nowMs();
    const r = spawnSync(process.execPath, args, {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
    });
    const ms = nowMs() - t0;
    if (r.status !== 0) throw new Error(`${args.join(' ')}: exit ${r.status}: ${r.stderr}`);
    return ms;
  };
  const send = [
    BIN,
    'bus',
    'send',
    '--root',
    root,
    '--me',
    'claude',
    '--to',
    'codex',
    '--subject',
    'hi',
    '--body',
    BODY,
  ];
  const cases = { baseline: ['-e', '0'], send };
  const times = { baseline: [], send: [] };
  for (let i = 0; i < 2; i++) {
    time(cases.baseline);
    time(cases.send);
  }
  for (let i = 0; i < CLI_RUNS; i++) {
    for (const k of i % 2 ? ['baseline', 'send'] : ['send', 'baseline']) times[k].push(time(cases[k]));
  }
  return { baseline: median(times.baseline), send: median(times.send) };
}

const began = nowMs();
settle();
log('bus: durable send vs the floor (in this process)');
const s = measureSend();
settle();
log("bus: the same floors in C, beside the bus's syscalls alone");
const inC = measureInC(s.bytes);
settle();
log('bus: drain of 20 with and without history');
const d = measureDrain();
settle();
log('bus: `troupe bus send` as a command');
const c = measureCli();
const tookS = (nowMs() - began) / 1000;

const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
const ms = (x, digits = 3) => `${x.toFixed(digits)} ms`;
const ratio = (r) => `${r.toFixed(2)}×`;
const rows = [
  [
    'Durable send, one recipient (median)',
    ms(s.send),
    `floor (temp file + fsync, rename, fsync of new/): ${ms(s.floor)}`,
    ratio(s.send / s.floor),
    '≤ 1.3×',
    verdict(s.send / s.floor <= 1.3),
  ],
  [
    "ⓘ Durable send vs AMQ's sequence",
    ms(s.send),
    `floor + fsync of tmp/ before the rename: ${ms(s.amq)}`,
    ratio(s.send / s.amq),
    '—',
    'info',
  ],
  [
    'ⓘ Durable send vs a delivery whose name is not durable',
    ms(s.send),
    `temp file + fsync, fsync of tmp/, rename (new/ never fsynced): ${ms(s.tmpSynced)}`,
    ratio(s.send / s.tmpSynced),
    '—',
    'info',
  ],
  ...(inC
    ? [
        [
          "ⓘ In C, no JavaScript: the bus's syscalls vs the floor",
          ms(inC.busSyscalls),
          `floor in C: ${ms(inC.floor)}`,
          ratio(inC.busSyscalls / inC.floor),
          '—',
          'info',
        ],
        [
          'ⓘ In C: the floor vs a delivery whose name is not durable',
          ms(inC.floor),
          `fsync of tmp/, rename, no fsync of new/: ${ms(inC.tmpSynced)}`,
          ratio(inC.floor / inC.tmpSynced),
          '—',
          'info',
        ],
      ]
    : []),
  [
    'Durable send, p95',
    ms(s.sendP95),
    `floor p95: ${ms(s.floorP95)}`,
    ratio(s.sendP95 / s.floorP95),
    '< 25 ms',
    verdict(s.sendP95 < 25),
  ],
  [
    `Drain 20 from an inbox holding ${HISTORY.toLocaleString('en')} read messages`,
    ms(d.full),
    `same batch, empty history: ${ms(d.empty)}`,
    ratio(d.full / d.empty),
    '≤ 2×',
    verdict(d.full / d.empty <= 2),
  ],
  [
    '`troupe bus send`, wall',
    ms(c.send, 1),
    `\`node -e 0\`: ${ms(c.baseline, 1)}`,
    ratio(c.send / c.baseline),
    '< 150 ms',
    verdict(c.send < 150),
  ],
];
const table = [
  '| Figure | troupe | Baseline (same run) | Ratio | Target | Result |',
  '| --- | --- | --- | --- | --- | --- |',
  ...rows.map((r) => `| ${r.join(' | ')} |`),
].join('\n');

const section = `<!-- bus:start -->
## Message bus

Written by \`node bench/bus.js\` (after \`npm run build\`); do not edit by hand. ${quick ? '**Quick run (fewer samples, 10,000 history).** ' : ''}

- **Date:** ${new Date().toISOString().slice(0, 19)}Z
- **Machine:** Node ${process.version}, ${cpus()[0]?.model.trim() ?? '?'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}
- **Bench time:** ${Math.round(tookS)} s

${table}

**Method** (bench/bus.js). One temp dir per side on the same disk, \`sync\` and a pause before each part.
*Send*: \`openBus(root).send()\` of a ${s.bytes}-byte message (review_request, one recipient, outbox copy,
presence touch) against the floor: a loop that only writes a temp file of the same size, fsyncs it, renames
it into \`new/\` and fsyncs \`new/\` — the least a delivery does whose message survives a power cut once
the call returns. The bus does that with AMQ's no-replace publish (a hard link into \`new/\` instead of
the rename, then the attempt renamed into \`sent/\` as the outbox copy), and a presence touch at most once
a second. The ⓘ rows: AMQ's own sequence
(which also fsyncs \`tmp/\` before the rename), and the issue's wording read in order (fsync of \`tmp/\`, then
the rename, with \`new/\` never fsynced: the bytes are durable but the delivered name is not, so it does
less than any durable send must). ${SEND_RUNS} of each, interleaved in blocks of 10 after 20 warm-up each;
medians and 95th percentiles of per-message times. The "In C" rows (bench/bus-floor.c, built with \`cc -O2\`
when there is a compiler) run the two floors and the bus's exact syscalls (link into \`new/\`, rename into
\`sent/\`, fsync of \`new/\`) in one C loop interleaved the same way: the part of the ratio that is the
protocol rather than JavaScript.
*Drain*: 20 messages sent (untimed), then \`drain('codex', {limit: 20})\` timed: claim new→cur, fsync both
dirs, parse and validate, 20 \`drained\` receipts; one inbox has ${HISTORY.toLocaleString('en')} read messages
in \`cur/\` and as many receipts, the other none. ${DRAIN_TRIALS} trials each, alternating; medians.
*Command*: \`node bin/troupe.js bus send --root … --me claude --to codex --subject hi --body …\` spawned
and timed to exit, against \`node -e 0\`; ${CLI_RUNS} interleaved runs each; medians.
<!-- bus:end -->`;

process.stdout.write(`${table}\n`);
if (!process.argv.includes('--no-write')) {
  const old = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '# Benchmarks\n';
  const re = /<!-- bus:start -->[\s\S]*?<!-- bus:end -->/;
  const next = re.test(old) ? old.replace(re, section) : `${old.replace(/\n*$/, '\n\n')}${section}\n`;
  writeFileSync(DOC, next);
  log(`updated ${DOC}`);
}
