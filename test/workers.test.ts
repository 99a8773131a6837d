import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { startWorker, type TestDatabase, testDatabase } from './support/queue-db.js';
import { eventLog, project, troupe, waitFor } from './support/troupe.js';

/**
 * Workers on the pg-boss queue (docs/distributed.md), on one machine: the store is the project's
 * SQLite file, the queue a database of its own per test on the local PostgreSQL.
 */

const chain = `agents:
  - id: writer
    runtime: claude
    handoffs: [{to: editor}]
  - id: editor
    runtime: codex
`;

/** A fan-out (claude and codex branches), their join at an llm gate that rejects once, then a session. */
const batch = `agents:
  - id: lead
    runtime: claude
    handoffs: [{to: "left, right"}]
  - id: left
    runtime: claude
    handoffs: [{to: review}]
  - id: right
    runtime: codex
    handoffs: [{to: review}]
  - id: review
    runtime: claude
    gate: {type: llm, prompt: "Is it ready?"}
    handoffs: [{to: debate, condition: on_approve}]
  - id: debate
    type: session
    participants: [pro, con]
    max_rounds: 2
    consensus: {method: vote, keyword: "VOTE: AGREE", require: all}
  - id: pro
    runtime: claude
  - id: con
    runtime: codex
`;
const batchScript = `agents:
  lead: ["split the work"]
  left: [{reply: "left done", delay_ms: 20}]
  right: [{reply: "right done", delay_ms: 20}]
  review: ["joined and reviewed"]
  pro: ["ship it. VOTE: AGREE"]
  con: ["fine by me. VOTE: AGREE"]
gates:
  review: [{decision: rejected, reason: "once more"}, approved]
`;

async function detach(dir: string, url: string, args: string[], env: Record<string, string> = {}) {
  const run = await troupe(dir, ['run', ...args, '--detach'], { TROUPE_QUEUE: url, ...env });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return run.stdout.trim();
}

function status(dir: string, id: string): string {
  return (
    eventLog(dir, id).findLast((e) => e.type.startsWith('task_') && e.type !== 'task_resumed')?.type ?? ''
  );
}

/** Waits until a wake-up waits in `queue`, not yet taken. */
async function queued(db: TestDatabase, queue: string): Promise<void> {
  await waitFor(async () => {
    const rows = await db.query<{ n: string }>(
      "SELECT count(*) AS n FROM pgboss.job WHERE name = $1 AND state = 'created'",
      [queue],
    );
    return Number(rows[0]!.n) > 0 ? true : undefined;
    // a bound, not a measure: a clean-clone CI once needed more than 20 s here, with other files running
  }, 60_000);
}

/** How many times each stage of the task completed. */
function completions(dir: string, id: string): number[] {
  const counts: number[] = [];
  for (const e of eventLog(dir, id))
    if (e.type === 'stage_completed')
      counts[(e.data.stage as number) - 1] = (counts[(e.data.stage as number) - 1] ?? 0) + 1;
  return counts;
}

/** The pid of the process that recorded the stage's start (the last `task_resumed` before it). */
function starterOf(dir: string, id: string, agent: string): number | undefined {
  let pid: number | undefined;
  for (const e of eventLog(dir, id)) {
    if (e.type === 'task_resumed') pid = e.data.pid as number;
    if (e.type === 'stage_started' && e.data.agent === agent) return pid;
  }
  return undefined;
}

describe('troupe worker', () => {
  it('three workers work through 60 tasks (fan-outs, gates, a session): all complete, each stage once', async () => {
    await using db = await testDatabase();
    const dir = project({ 'batch.yaml': batch, 's.yaml': batchScript });
    const workers = await Promise.all(
      [1, 2, 3].map(() => startWorker(dir, db.url, ['--concurrency', '4', '--runtimes', 'claude,codex'])),
    );
    const ids: string[] = [];
    for (let i = 0; i < 60; i += 6) {
      ids.push(
        ...(await Promise.all(
          [0, 1, 2, 3, 4, 5].map((j) =>
            detach(dir, db.url, [`task ${i + j}`, '--file', 'batch.yaml', '--script', 's.yaml']),
          ),
        )),
      );
    }
    await waitFor(
      () => (ids.every((id) => status(dir, id) === 'task_completed') ? true : undefined),
      240_000,
    );
    for (const id of ids) {
      // lead, left, right, review twice (its gate rejects once), pro, con; the session's own stage ends once
      expect(completions(dir, id)).toEqual([1, 1, 1, 1, 1, 1, 1]);
      expect(eventLog(dir, id).filter((e) => e.type === 'session_ended')).toHaveLength(1);
    }
    const listed = await troupe(dir, ['workers', '--json'], { TROUPE_QUEUE: db.url });
    expect(
      JSON.parse(listed.stdout)
        .map((w: { pid: number }) => w.pid)
        .sort(),
    ).toEqual(workers.map((w) => w.pid).sort());
    expect(await Promise.all(workers.map((w) => w.stop()))).toEqual([0, 0, 0]);
    const after = await troupe(dir, ['workers', '--json'], { TROUPE_QUEUE: db.url });
    expect(JSON.parse(after.stdout)).toEqual([]);
  }, 300_000);

  it('a worker without codex never takes a codex stage; one with codex carries the task on', async () => {
    await using db = await testDatabase();
    const dir = project({
      'p.yaml': chain,
      's.yaml': 'agents:\n  writer: ["draft"]\n  editor: ["edited"]\n',
    });
    const claude = await startWorker(dir, db.url, ['--runtimes', 'claude']);
    const id = await detach(dir, db.url, ['go', '--file', 'p.yaml', '--script', 's.yaml']);
    // the writer's stage is done and the editor's wake-up waits in the codex lane
    await queued(db, 'troupe-codex');
    expect(
      eventLog(dir, id)
        .filter((e) => e.type === 'stage_started')
        .map((e) => e.data.agent),
    ).toEqual(['writer']);
    const codex = await startWorker(dir, db.url, ['--runtimes', 'codex']);
    await waitFor(() => (status(dir, id) === 'task_completed' ? true : undefined), 30_000);
    expect(starterOf(dir, id, 'editor')).toBe(codex.pid);
    expect(completions(dir, id)).toEqual([1, 1]);
    expect([await claude.stop(), await codex.stop()]).toEqual([0, 0]);
  }, 60_000);

  it('worker_labels: a stage that needs a label waits for a worker that has it, whenever its lane appears', async () => {
    await using db = await testDatabase();
    const labelled = (labels: string) =>
      `agents:\n  - id: writer\n    runtime: codex\n    handoffs: [{to: trainer}]\n  - id: trainer\n    runtime: claude\n    worker_labels: [${labels}]\n`;
    const dir = project({
      'gpu.yaml': labelled('gpu'),
      'eu.yaml': labelled('eu-west, gpu'),
      's.yaml': 'agents:\n  writer: ["draft"]\n  trainer: ["trained"]\n',
    });
    // the writers run on codex, which only the worker without labels serves: each trainer's stage
    // is then a wake-up the labelled worker must take from its lane
    const plain = await startWorker(dir, db.url, ['--runtimes', 'claude,codex']);
    const first = await detach(dir, db.url, ['go', '--file', 'gpu.yaml', '--script', 's.yaml']);
    // the writer's stage is done; the trainer's wake-up waits in its labelled lane
    await queued(db, 'troupe-claude--gpu');
    expect(
      eventLog(dir, first)
        .filter((e) => e.type === 'stage_started')
        .map((e) => e.data.agent),
    ).toEqual(['writer']);
    // a worker with the label (and more) takes it: a lane that was there before it started
    const gpu = await startWorker(dir, db.url, ['--runtimes', 'claude', '--labels', 'gpu,eu-west']);
    await waitFor(() => (status(dir, first) === 'task_completed' ? true : undefined), 30_000);
    expect(starterOf(dir, first, 'trainer')).toBe(gpu.pid);
    // and a lane that first appears while it runs (two labels)
    const second = await detach(dir, db.url, ['again', '--file', 'eu.yaml', '--script', 's.yaml']);
    await waitFor(() => (status(dir, second) === 'task_completed' ? true : undefined), 30_000);
    expect(starterOf(dir, second, 'trainer')).toBe(gpu.pid);
    expect([completions(dir, first), completions(dir, second)]).toEqual([
      [1, 1],
      [1, 1],
    ]);
    expect([await plain.stop(), await gpu.stop()]).toEqual([0, 0]);

    const bad = await troupe(dir, ['worker', '--labels', 'GPU'], { TROUPE_QUEUE: db.url });
    expect([bad.code, bad.stderr.trim().split('\n')[0]]).toEqual([
      2,
      'troupe: --labels: `GPU` is not a label',
    ]);
  }, 90_000);

  it('SIGKILL of a worker mid-stage loses nothing: the stage runs again on another worker, once', async () => {
    await using db = await testDatabase();
    const dir = project({
      'p.yaml': chain.replace('runtime: codex', 'runtime: claude'),
      's.yaml': 'agents:\n  writer: [{reply: "draft", delay_ms: 4000}]\n  editor: ["edited"]\n',
    });
    const doomed = await startWorker(dir, db.url, ['--runtimes', 'claude']);
    const id = await detach(dir, db.url, ['go', '--file', 'p.yaml', '--script', 's.yaml']);
    await waitFor(
      () => (eventLog(dir, id).some((e) => e.type === 'stage_started') ? true : undefined),
      20_000,
    );
    doomed.child.kill('SIGKILL');
    await doomed.child;
    const survivor = await startWorker(dir, db.url, ['--runtimes', 'claude']);
    await waitFor(() => (status(dir, id) === 'task_completed' ? true : undefined), 30_000);
    const log = eventLog(dir, id);
    expect(log.filter((e) => e.type === 'stage_interrupted').map((e) => e.data.stage)).toEqual([1]);
    expect(completions(dir, id)).toEqual([1, 1]);
    // the interrupted call recorded nothing: the stage runs its script entry again, on the survivor
    expect(log.find((e) => e.type === 'stage_completed')?.data.output).toBe('draft');
    expect(starterOf(dir, id, 'editor')).toBe(survivor.pid);
    expect(await survivor.stop()).toBe(0);
  }, 60_000);

  it('a rate limit seen by one worker holds the others: no stage of that provider completes before the reset', async () => {
    await using db = await testDatabase();
    const dir = project({
      'p.yaml': 'agents:\n  - id: writer\n    runtime: claude\n',
      'limited.yaml': 'agents:\n  writer: [{error: rate_limit, reset_after_s: 15}, "draft"]\n',
      'ok.yaml': 'agents:\n  writer: ["draft"]\n',
    });
    const workers = await Promise.all(
      [1, 2, 3].map(() => startWorker(dir, db.url, ['--runtimes', 'claude'])),
    );
    const limited = await detach(dir, db.url, ['limited', '--file', 'p.yaml', '--script', 'limited.yaml']);
    const limit = await waitFor(() => eventLog(dir, limited).find((e) => e.type === 'rate_limited'), 20_000);
    const others = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((i) =>
        detach(dir, db.url, [`other ${i}`, '--file', 'p.yaml', '--script', 'ok.yaml']),
      ),
    );
    const resetAt = Date.parse(limit.data.resetAt as string);
    // all were submitted while the window was closed
    for (const id of others) expect(Date.parse(eventLog(dir, id)[0]!.at)).toBeLessThan(resetAt);
    const all = [limited, ...others];
    await waitFor(() => (all.every((id) => status(dir, id) === 'task_completed') ? true : undefined), 40_000);
    for (const id of all) {
      const log = eventLog(dir, id);
      const done = log.find((e) => e.type === 'stage_completed')!;
      expect(Date.parse(done.at)).toBeGreaterThanOrEqual(resetAt);
      expect(completions(dir, id)).toEqual([1]);
    }
    // the others saw the closed window and waited rather than calling the provider
    for (const id of others) expect(eventLog(dir, id).some((e) => e.type === 'rate_limited')).toBe(true);
    expect(await Promise.all(workers.map((w) => w.stop()))).toEqual([0, 0, 0]);
  }, 90_000);

  it('a task whose wake-ups keep failing is parked (its log unreadable: by the queue alone); resume clears it', async () => {
    await using db = await testDatabase();
    const env = { TROUPE_QUEUE: db.url, TROUPE_QUEUE_RETRY_LIMIT: '1', TROUPE_QUEUE_RETRY_DELAY: '1' };
    const dir = project({
      'p.yaml': chain.replace('runtime: codex', 'runtime: claude'),
      's.yaml': 'agents:\n  writer: ["draft"]\n  editor: ["edited"]\n',
    });
    const id = await detach(dir, db.url, ['go', '--file', 'p.yaml', '--script', 's.yaml'], env);
    // a log no process can replay (an event for a stage that never started): every run fails
    const sqlite = new Database(join(dir, '.troupe', 'troupe.db'));
    const bad = sqlite
      .prepare("INSERT INTO events (task_id, type, at, data) VALUES (?, 'stage_completed', ?, ?)")
      .run(id, new Date().toISOString(), JSON.stringify({ stage: 9, activation: 'a9', agent: 'writer' }));
    const worker = await startWorker(dir, db.url, ['--runtimes', 'claude'], env);
    const dead = await waitFor(async () => {
      const list = await troupe(dir, ['list', '--dead', '--json'], env);
      const rows = JSON.parse(list.stdout) as Array<{ id: string; error: string }>;
      return rows.length > 0 ? rows : undefined;
    }, 40_000);
    expect(dead.map((r) => r.id)).toContain(id);
    sqlite.prepare('DELETE FROM events WHERE seq = ?').run(bad.lastInsertRowid);
    sqlite.close();
    const shown = await troupe(dir, ['status', id], env);
    expect(shown.stdout).toMatch(/parked: .*troupe resume/);
    const resumed = await troupe(dir, ['resume', id], env);
    expect(resumed.stdout).toMatch(/parked no more, queued again/);
    expect(resumed.code).toBe(0);
    await waitFor(() => (status(dir, id) === 'task_completed' ? true : undefined), 30_000);
    expect(completions(dir, id)).toEqual([1, 1]);
    const after = await troupe(dir, ['list', '--dead', '--json'], env);
    expect(JSON.parse(after.stdout)).toEqual([]);
    expect(await worker.stop()).toBe(0);
  }, 90_000);

  it('SIGTERM: the running stage finishes, the worker exits 0, and the next stage is handed to another', async () => {
    await using db = await testDatabase();
    const dir = project({
      'p.yaml': chain.replace('runtime: codex', 'runtime: claude'),
      's.yaml': 'agents:\n  writer: [{reply: "draft", delay_ms: 2000}]\n  editor: ["edited"]\n',
    });
    const first = await startWorker(dir, db.url, ['--runtimes', 'claude']);
    const id = await detach(dir, db.url, ['go', '--file', 'p.yaml', '--script', 's.yaml']);
    await waitFor(
      () => (eventLog(dir, id).some((e) => e.type === 'stage_started') ? true : undefined),
      20_000,
    );
    expect(await first.stop()).toBe(0);
    const log = eventLog(dir, id);
    expect(log.filter((e) => e.type === 'stage_completed').map((e) => e.data.agent)).toEqual(['writer']);
    expect(log.some((e) => e.type === 'stage_interrupted')).toBe(false);
    const second = await startWorker(dir, db.url, ['--runtimes', 'claude']);
    await waitFor(() => (status(dir, id) === 'task_completed' ? true : undefined), 30_000);
    expect(starterOf(dir, id, 'editor')).toBe(second.pid);
    expect(completions(dir, id)).toEqual([1, 1]);
    expect(await second.stop()).toBe(0);
  }, 60_000);

  it('limits: caps hold across workers: with concurrency 1, no two calls to the provider overlap', async () => {
    await using db = await testDatabase();
    const lines = Array.from({ length: 8 }, (_, i) => `line ${i}`).join('\\n');
    const dir = project({
      '.troupe/config.yaml': 'limits:\n  claude: {concurrency: 1}\n',
      'p.yaml': 'agents:\n  - id: writer\n    runtime: claude\n',
      's.yaml': `agents:\n  writer: [{reply: "${lines}", delay_ms: 1200}]\n`,
    });
    const workers = await Promise.all(
      [1, 2, 3].map(() => startWorker(dir, db.url, ['--runtimes', 'claude'])),
    );
    const ids = await Promise.all(
      [1, 2, 3, 4, 5].map((i) => detach(dir, db.url, [`t${i}`, '--file', 'p.yaml', '--script', 's.yaml'])),
    );
    await waitFor(() => (ids.every((id) => status(dir, id) === 'task_completed') ? true : undefined), 60_000);
    // each call streams its output while it runs: its first and last stage_output bound the call.
    // A stage run again (its 1 s lease lost on a loaded machine, taken over) is a second call.
    const calls = ids
      .flatMap((id) => callsOf(eventLog(dir, id)))
      .map((out) => [Date.parse(out[0]!.at), Date.parse(out.at(-1)!.at)] as const)
      .sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < calls.length; i++) expect(calls[i]![0]).toBeGreaterThan(calls[i - 1]![1]);
    // and more than one worker made them
    const busy = workers.filter((w) => ids.some((id) => w.stderr().includes(`${id}: running`)));
    expect(busy.length).toBeGreaterThan(1);
    expect(await Promise.all(workers.map((w) => w.stop()))).toEqual([0, 0, 0]);
  }, 90_000);

  it('on the PostgreSQL store, with the queue in its database: runtime lanes and each stage once', async () => {
    await using db = await testDatabase();
    const env = { TROUPE_STORE: db.url };
    const dir = project({
      'p.yaml': chain,
      's.yaml': 'agents:\n  writer: ["draft"]\n  editor: ["edited"]\n',
    });
    const claude = await startWorker(dir, '', ['--runtimes', 'claude'], { ...env, TROUPE_QUEUE: '' });
    const codex = await startWorker(dir, '', ['--runtimes', 'codex'], { ...env, TROUPE_QUEUE: '' });
    const ids = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((i) =>
        detach(dir, '', [`t${i}`, '--file', 'p.yaml', '--script', 's.yaml'], env),
      ),
    );
    const events = (id: string) =>
      db.query<{ type: string; data: string }>(
        'SELECT type, data FROM events WHERE task_id = $1 ORDER BY seq',
        [id],
      );
    await waitFor(async () => {
      for (const id of ids)
        if (!(await events(id)).some((e) => e.type === 'task_completed')) return undefined;
      return true;
    }, 60_000);
    for (const id of ids) {
      const log = await events(id);
      const done = log.filter((e) => e.type === 'stage_completed').map((e) => JSON.parse(e.data).stage);
      expect(done).toEqual([1, 2]);
      // the editor (codex) started after the claude worker handed the task over
      const resumed = log.filter((e) => e.type === 'task_resumed').map((e) => JSON.parse(e.data).pid);
      expect(resumed.at(-1)).toBe(codex.pid);
    }
    expect([await claude.stop(), await codex.stop()]).toEqual([0, 0]);
  }, 90_000);

  it('projects sharing a database through ?schema= keep apart: each worker takes its own wake-ups and lists its own workers', async () => {
    await using db = await testDatabase();
    const storeOf = (schema: string) => ({ TROUPE_STORE: `${db.url}?schema=${schema}`, TROUPE_QUEUE: '' });
    const files = {
      'p.yaml': 'agents:\n  - id: writer\n    runtime: claude\n',
      's.yaml': 'agents:\n  writer: ["draft"]\n',
    };
    const [a, b] = [project(files), project(files)];
    const workerB = await startWorker(b, '', ['--runtimes', 'claude'], storeOf('proj_b'));
    const id = await detach(
      a,
      '',
      ['task of A', '--file', 'p.yaml', '--script', 's.yaml'],
      storeOf('proj_a'),
    );
    // B's worker is told of the wake-up and polls: time for it to take the wake-up, were it in its queue
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const workerA = await startWorker(a, '', ['--runtimes', 'claude'], storeOf('proj_a'));
    const events = () =>
      db.query<{ type: string; data: string }>(
        'SELECT type, data FROM proj_a.events WHERE task_id = $1 ORDER BY seq',
        [id],
      );
    await waitFor(
      async () => ((await events()).some((e) => e.type === 'task_completed') ? true : undefined),
      30_000,
    );
    expect(workerA.stderr()).toContain(`${id}: running`);
    expect(workerB.stderr()).not.toContain(id);
    const jobs = (schema: string) =>
      db.query(`SELECT state FROM pgboss_${schema}.job WHERE data->>'taskId' = $1`, [id]);
    expect((await jobs('proj_a')).length).toBeGreaterThan(0);
    expect(await jobs('proj_b')).toEqual([]);
    const listed = async (dir: string, schema: string) =>
      JSON.parse((await troupe(dir, ['workers', '--json'], storeOf(schema))).stdout).map(
        (w: { pid: number }) => w.pid,
      );
    expect(await listed(a, 'proj_a')).toEqual([workerA.pid]);
    expect(await listed(b, 'proj_b')).toEqual([workerB.pid]);
    expect([await workerA.stop(), await workerB.stop()]).toEqual([0, 0]);
  }, 90_000);

  it('bad input: --detach without a queue creates nothing; unknown runtimes and a zero concurrency are usage errors', async () => {
    const dir = project({
      'p.yaml': chain,
      's.yaml': 'agents:\n  writer: ["draft"]\n  editor: ["edited"]\n',
    });
    const none = await troupe(dir, ['run', 'go', '--file', 'p.yaml', '--script', 's.yaml', '--detach'], {
      TROUPE_QUEUE: '',
    });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(
      /^troupe: submitting a task to the workers needs a work queue, and none is configured\n {2}hint: /,
    );
    expect((await troupe(dir, ['list', '--json'])).stdout.trim()).toBe('[]');
    const away = await troupe(dir, ['run', 'go', '--file', 'p.yaml', '--detach'], {
      TROUPE_QUEUE: 'postgres://troupe:secret@127.0.0.1:1/x',
    });
    expect(away.code).toBe(1);
    expect(away.stderr).toMatch(/cannot open the work queue at postgres:\/\/troupe:\*\*\*@127\.0\.0\.1:1\/x/);
    expect(away.stderr).not.toMatch(/secret/);
    const runtimes = await troupe(dir, ['worker', '--runtimes', 'claude,clod']);
    expect([runtimes.code, runtimes.stderr.split('\n')[0]]).toEqual([2, 'troupe: --runtimes: unknown clod']);
    const zero = await troupe(dir, ['worker', '--concurrency', '0']);
    expect(zero.code).toBe(2);
  });

  it('a task waiting for a person leaves the queue alone; approve --detach hands it back to the workers', async () => {
    await using db = await testDatabase();
    const dir = project({
      'p.yaml': chain.replace(
        '    handoffs: [{to: editor}]',
        '    gate: {type: human}\n    handoffs: [{to: editor, condition: on_approve}]',
      ),
      's.yaml': 'agents:\n  writer: ["draft"]\n  editor: ["edited"]\n',
    });
    const worker = await startWorker(dir, db.url, ['--runtimes', 'claude,codex']);
    const id = await detach(dir, db.url, ['go', '--file', 'p.yaml', '--script', 's.yaml']);
    const waiting = await waitFor(async () => {
      const shown = await troupe(dir, ['status', id, '--json'], { TROUPE_QUEUE: db.url });
      const json = JSON.parse(shown.stdout) as { waiting: { kind: string } | null };
      return json.waiting ?? undefined;
    }, 20_000);
    expect(waiting.kind).toBe('gate');
    const queued = await db.query<{ n: string }>(
      "SELECT count(*) AS n FROM pgboss.job WHERE name <> 'troupe-check' AND state IN ('created', 'retry')",
    );
    expect(Number(queued[0]!.n)).toBe(0);
    const approved = await troupe(dir, ['approve', id, '--detach'], { TROUPE_QUEUE: db.url });
    expect([approved.code, approved.stdout.trim()]).toEqual([0, id]);
    await waitFor(() => (status(dir, id) === 'task_completed' ? true : undefined), 30_000);
    expect(starterOf(dir, id, 'editor')).toBe(worker.pid);
    expect(completions(dir, id)).toEqual([1, 1]);
    expect(await worker.stop()).toBe(0);
  }, 60_000);
});

/** The stage_output events of each run of a stage: a stage_started begins the next. */
function callsOf(log: Array<{ type: string; at: string }>): Array<Array<{ at: string }>> {
  const calls: Array<Array<{ at: string }>> = [];
  for (const event of log) {
    if (event.type === 'stage_started') calls.push([]);
    else if (event.type === 'stage_output') calls.at(-1)?.push(event);
  }
  return calls.filter((outputs) => outputs.length > 0);
}
