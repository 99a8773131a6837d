// The red team's kill -9 harness (issue #35): `node bench/kill-harness.js [--trials N]` after the
// build. For `troupe run` (then `troupe resume`) and `troupe worker` (then another worker takes
// over, on a PostgreSQL queue), half the trials kill the pid, half the whole process group, at a
// random moment of a 5-stage chain whose stages each start a child that leaves the group with
// setsid. Counts what the review counted and writes the table into docs/reliability.md.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { execa } from 'execa';
import pg from 'pg';
import { median, nowMs, tempDir } from './lib.js';

const BIN = fileURLToPath(new URL('../bin/troupe.js', import.meta.url));
const DOC = fileURLToPath(new URL('../docs/reliability.md', import.meta.url));
const ADMIN = process.env.TROUPE_BENCH_PG ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const trialsArg = process.argv.indexOf('--trials');
const TRIALS = trialsArg > 0 ? Number(process.argv[trialsArg + 1]) : 24;
const log = (line) => process.stderr.write(`${line}\n`);

const STAGES = ['s1', 's2', 's3', 's4', 's5'];
const stage = (id, next) => `  - id: ${id}
    runtime: command
    command: [bash, -c, 'log() { echo "$TROUPE_AGENT $1 $$ $(date +%s%3N)" >> effects.log; }; log start; (setsid bash -c "sleep 1; echo \\"$TROUPE_AGENT late \\$\\$ \\$(date +%s%3N)\\" >> effects.log" &); sleep 1.2; log end']
${next ? `    handoffs: [{ to: ${next} }]\n` : ''}`;
const PIPELINE = `agents:\n${STAGES.map((id, i) => stage(id, STAGES[i + 1])).join('')}`;

function alive(pid) {
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function taggedPids(prefix) {
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || !alive(Number(name))) continue;
    try {
      const environ = readFileSync(`/proc/${name}/environ`, 'latin1');
      if (environ.split('\0').some((e) => e.startsWith(`TROUPE_AGENT_TAG=${prefix}`)))
        found.push(Number(name));
    } catch {
      // gone
    }
  }
  return found;
}

function events(dir, id) {
  const db = new Database(join(dir, '.troupe', 'troupe.db'), { readonly: true, timeout: 5000 });
  try {
    return db
      .prepare('SELECT type, at, data FROM events WHERE task_id = ? ORDER BY seq')
      .all(id)
      .map((row) => ({ type: row.type, at: Date.parse(row.at), data: JSON.parse(row.data) }));
  } finally {
    db.close();
  }
}

function effects(dir) {
  if (!existsSync(join(dir, 'effects.log'))) return [];
  return readFileSync(join(dir, 'effects.log'), 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [agent, what, pid, at] = line.split(' ');
      return { agent, what, pid: Number(pid), at: Number(at) };
    });
}

async function until(check, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function project() {
  const dir = tempDir('kill');
  mkdirSync(join(dir, '.troupe'));
  writeFileSync(join(dir, '.troupe', 'agents.yaml'), PIPELINE);
  return dir;
}

function start(dir, args, env = {}) {
  const child = execa('node', [BIN, ...args], {
    cwd: dir,
    reject: false,
    env: { NO_COLOR: '1', ...env },
    stdin: 'ignore',
    detached: true,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk.toString();
  });
  return { child, stderr: () => stderr };
}

/** One trial: start, kill at `afterMs` into the chain, recover, and count. */
async function trial(mode, group, afterMs, queue) {
  const dir = project();
  let owner;
  let id;
  if (mode === 'run') {
    owner = start(dir, ['run', 'go', '--no-interactive']);
    id = await until(() => /troupe (T-[0-9A-F]{6})/.exec(owner.stderr())?.[1], 20_000, 'the task id');
  } else {
    const env = { TROUPE_QUEUE: queue, TROUPE_LEASE_SECONDS: '2' };
    owner = start(dir, ['worker'], env);
    await until(() => / ready \(/.test(owner.stderr()), 20_000, 'the worker');
    const detached = await execa('node', [BIN, 'run', 'go', '--detach'], { cwd: dir, env, reject: false });
    id = detached.stdout.trim();
  }
  await until(() => effects(dir).length > 0, 20_000, 'the first stage');
  await new Promise((r) => setTimeout(r, afterMs));
  const finishedFirst = events(dir, id).some((e) => e.type === 'task_completed');
  process.kill(group ? -owner.child.pid : owner.child.pid, 'SIGKILL');
  const killedAt = Date.now();
  const t0 = nowMs();
  await owner.child;
  await until(() => taggedPids(`${id}/`).length === 0, 30_000, 'the orphans to end');
  const orphansGoneMs = nowMs() - t0;
  const before = events(dir, id);
  const completedBefore = new Set(
    before.filter((e) => e.type === 'stage_completed').map((e) => e.data.stage),
  );
  const killedMidStage = before.filter((e) => e.type === 'stage_started').length > completedBefore.size;
  if (mode === 'run') {
    await execa('node', [BIN, 'resume', id, '--no-interactive'], {
      cwd: dir,
      reject: false,
      timeout: 120_000,
    });
  } else {
    const env = { TROUPE_QUEUE: queue, TROUPE_LEASE_SECONDS: '2' };
    const next = start(dir, ['worker'], env);
    await until(() => events(dir, id).some((e) => e.type === 'task_completed'), 120_000, 'the takeover');
    next.child.kill('SIGTERM');
    await next.child;
  }
  const after = events(dir, id);
  const all = effects(dir);
  const killedPids = new Set(all.filter((e) => e.at <= killedAt).map((e) => e.pid));
  const completions = after.filter((e) => e.type === 'stage_completed').map((e) => e.data.stage);
  const restarts = all.filter((e) => e.what === 'start' && e.at > killedAt);
  const startedBefore = new Set(
    all.filter((e) => e.what === 'start' && e.at <= killedAt).map((e) => e.agent),
  );
  return {
    completed: after.some((e) => e.type === 'task_completed'),
    finishedFirst,
    killedMidStage,
    orphansGoneMs,
    // a process of the killed run that wrote after the kill ran on beside the recovery
    overlapping: all.filter((e) => killedPids.has(e.pid) && e.at > killedAt + 50).length,
    rerunCompleted: restarts.filter((e) => completedBefore.has(STAGES.indexOf(e.agent) + 1)).length,
    duplicateCompletions: completions.length - new Set(completions).size,
    lostStages: STAGES.length - new Set(completions).size,
    interruptedRerun: restarts.filter(
      (e) => startedBefore.has(e.agent) && !completedBefore.has(STAGES.indexOf(e.agent) + 1),
    ).length,
  };
}

async function queueDatabase() {
  const name = `troupe_kill_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client(ADMIN);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(ADMIN);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client(ADMIN);
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** What the supervisor costs an agent start: `true` run as troupe runs an agent, and run bare. */
async function supervisorCost(runs = 30) {
  const { CliProcess } = await import('../dist/runtimes/process.js');
  const supervised = async () => {
    const proc = new CliProcess({ bin: 'true', args: [], cwd: process.cwd() });
    for await (const _ of proc.lines());
    await proc.wait();
  };
  const bare = () => execa('true');
  const times = { supervised: [], bare: [] };
  for (let i = 0; i < runs + 3; i++) {
    for (const [name, run] of Object.entries({ supervised, bare })) {
      const t0 = nowMs();
      await run();
      if (i >= 3) times[name].push(nowMs() - t0);
    }
  }
  return { supervised: median(times.supervised), bare: median(times.bare) };
}

const cost = await supervisorCost();
log(`an agent start: ${cost.supervised.toFixed(1)} ms supervised, ${cost.bare.toFixed(1)} ms bare`);
const rows = [];
const db = await queueDatabase();
try {
  for (const mode of ['run', 'worker']) {
    for (const group of [false, true]) {
      const results = [];
      for (let i = 0; i < TRIALS / 2; i++) {
        const afterMs = Math.round(300 + Math.random() * 6000);
        const r = await trial(mode, group, afterMs, db.url);
        log(`${mode} ${group ? 'group' : 'pid'} #${i + 1} at ${afterMs} ms: ${JSON.stringify(r)}`);
        results.push(r);
      }
      rows.push({ mode, group, results });
    }
  }
} finally {
  await db.drop();
}

const sum = (results, key) =>
  results.reduce((n, r) => n + (typeof r[key] === 'boolean' ? Number(r[key]) : r[key]), 0);
const table = [
  '| killed | trials | killed mid-stage | completed after recovery | orphans gone after the kill (median / max) | stages of the killed run writing after the kill | completed stages re-run | duplicate `stage_completed` | stages lost | interrupted stages run again |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ...rows.map(({ mode, group, results }) => {
    const gone = results.map((r) => r.orphansGoneMs);
    return `| \`troupe ${mode}\`, kill -9 of the ${group ? 'process group' : 'pid'} | ${results.length} | ${sum(results, 'killedMidStage')} | ${sum(results, 'completed')}/${results.length} | ${Math.round(median(gone))} ms / ${Math.round(Math.max(...gone))} ms | ${sum(results, 'overlapping')} | ${sum(results, 'rerunCompleted')} | ${sum(results, 'duplicateCompletions')} | ${sum(results, 'lostStages')} | ${sum(results, 'interruptedRerun')} |`;
  }),
];
log(table.join('\n'));

const BEGIN = '<!-- kill-harness:begin -->';
const END = '<!-- kill-harness:end -->';
const doc = readFileSync(DOC, 'utf8');
const costLine = `What the supervisor costs: starting and ending \`true\` as troupe starts an agent takes ${cost.supervised.toFixed(1)} ms (median of 30), against ${cost.bare.toFixed(1)} ms for the bare spawn in the same run (${(cost.supervised / cost.bare).toFixed(1)}×): a Node process's start and a look through \`/proc\` at the end, once per agent call.`;
const block = `${BEGIN}\n${table.join('\n')}\n\n${costLine}\n\nMeasured ${new Date().toISOString().slice(0, 10)} by \`node bench/kill-harness.js --trials ${TRIALS}\` (Node ${process.version}).\n${END}`;
if (doc.includes(BEGIN)) {
  writeFileSync(DOC, doc.replace(new RegExp(`${BEGIN}[\\s\\S]*${END}`), block));
} else {
  log(`docs/reliability.md has no ${BEGIN} block: the table is above`);
}
