import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectAdapters } from '../src/app/task-adapters.js';
import { currentHolder, type EventStore } from '../src/core/event-store.js';
import type { StoredEvent } from '../src/core/events.js';
import type { TaskWorkspace } from '../src/core/task-workspace.js';
import { TaskService } from '../src/engine/task-service.js';
import { agent, handoff, pipeline } from '../src/engine/test-pipelines.js';
import { defaultConfig } from '../src/pipeline/config.js';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import { gitWorkspace } from '../src/workspace/task-workspace.js';
import { rev, sh, status, tmpRepo, writeFiles } from './support/git-repo.js';
import { dropSchemas, PG_URL, postgresUnreachable, scratchSchemaName } from './support/postgres.js';
import { alive, taggedPids } from './support/processes.js';
import { startWorker, type TestDatabase, testDatabase, type WorkerProcess } from './support/queue-db.js';
import { eventLog, project, troupe, waitFor } from './support/troupe.js';

/**
 * Fencing reaches the worktree (docs/distributed.md, "Fencing"): a stage's commit counts only if
 * its attempt still holds the task. On the real PostgreSQL server and real git.
 */

const unreachable = await postgresUnreachable();
const schemas = new Set<string>();
afterAll(() => dropSchemas(schemas));

const inWorktree = {
  ...pipeline(agent('dev')),
  workspace: {
    isolation: 'worktree' as const,
    base: 'main',
    merge: 'on_complete' as const,
    branch_prefix: 'troupe/',
    remote: null,
  },
};
const writesAFile = {
  agents: { dev: [{ reply: 'done', write: { 'late.txt': 'superseded\n' } }] },
  gates: {},
  human: {},
};

/** lead fans out to left and right, joined by join: the join merges both branches first. */
const fansOut = {
  ...pipeline(
    agent('lead', { handoffs: [handoff('left, right')] }),
    agent('left', { handoffs: [handoff('join')] }),
    agent('right', { handoffs: [handoff('join')] }),
    agent('join'),
  ),
  workspace: inWorktree.workspace,
};
const branchesWrite = {
  agents: {
    lead: [{ reply: 'split', write: { 'lead.txt': 'lead\n' } }],
    left: [{ reply: 'left', write: { 'left.txt': 'L\n' } }],
    right: [{ reply: 'right', write: { 'right.txt': 'R\n' } }],
    join: [{ reply: 'joined' }],
  },
  gates: {},
  human: {},
};

/** A project in a git repository whose tasks run on a fresh PostgreSQL schema, with `workspace` as its git. */
async function world(workspace: (base: TaskWorkspace) => TaskWorkspace = (base) => base) {
  const repo = await tmpRepo({ 'README.md': 'hi\n' });
  const schema = scratchSchemaName();
  schemas.add(schema);
  const store = openPostgresStore(PG_URL, { schema });
  // another worker's store, in this process: the same holder, so it may take the lease over at once
  const rival = openPostgresStore(PG_URL, { schema });
  const adapters = projectAdapters(repo, defaultConfig());
  const service = (s: EventStore) =>
    new TaskService(repo, s, defaultConfig(), { ...adapters, workspace: workspace(gitWorkspace) });
  return {
    repo,
    store,
    rival,
    service,
    close: () => {
      store.close();
      rival.close();
    },
  };
}

const types = (events: Iterable<StoredEvent>) => [...events].map((e) => e.type);

describe.skipIf(unreachable)(`fencing reaches git${unreachable ? `: ${unreachable}` : ''}`, () => {
  it('a stage whose append is refused (the lease taken over after its commit was made) leaves the task branch as it was', async () => {
    let takeOver = () => {};
    const w = await world((base) => ({
      ...base,
      async commit(...args: Parameters<TaskWorkspace['commit']>) {
        const made = await base.commit(...args);
        takeOver();
        return made;
      },
    }));
    try {
      const id = w.service(w.store).start({ pipeline: inWorktree, input: 'go', script: writesAFile });
      takeOver = () => expect(w.rival.tryLease(id, currentHolder())).toBe(true);
      const start = await rev(w.repo, 'main');
      await expect(w.service(w.store).continue(id)).rejects.toThrow(/lease of task .* was lost/);
      expect(await rev(w.repo, `troupe/${id}`)).toBe(start);
      expect(types(w.rival.events(id))).not.toContain('workspace_committed');
      expect(types(w.rival.events(id))).not.toContain('stage_completed');
      // the superseded attempt's file is left in the worktree, uncommitted: the next holder's align removes it
      expect(await status(join(w.repo, '.troupe', 'worktrees', id))).toContain('late.txt');
    } finally {
      w.close();
    }
  });

  it('a join whose lease is taken over after its merges were made leaves the task branch as it was', async () => {
    let takeOver = () => {};
    let before = '';
    const w = await world((base) => ({
      ...base,
      async mergeBranches(...args: Parameters<TaskWorkspace['mergeBranches']>) {
        before = await rev(args[0], 'HEAD');
        const made = await base.mergeBranches(...args);
        takeOver();
        return made;
      },
    }));
    try {
      const id = w.service(w.store).start({ pipeline: fansOut, input: 'go', script: branchesWrite });
      takeOver = () => expect(w.rival.tryLease(id, currentHolder())).toBe(true);
      await expect(w.service(w.store).continue(id)).rejects.toThrow(/lease of task .* was lost/);
      expect(before).not.toBe('');
      expect(await rev(w.repo, `troupe/${id}`)).toBe(before);
      expect(await sh(w.repo, 'ls-tree', '--name-only', `troupe/${id}`)).not.toMatch(/left\.txt|right\.txt/);
      expect(types(w.rival.events(id))).not.toContain('branches_merged');
      expect(await status(join(w.repo, '.troupe', 'worktrees', id))).toBe('');
    } finally {
      w.close();
    }
  });

  it("a troupe merge commit no attempt recorded, under a stage, is not taken for its agent's commit: tagged, not merged", async () => {
    let id = '';
    const w = await world((base) => ({
      ...base,
      async commit(...args: Parameters<TaskWorkspace['commit']>) {
        // what a stalled worker of a troupe that merged in place leaves when it wakes
        if (args[1].stage === 2)
          await sh(args[0], 'merge', '--no-ff', '-q', '-m', `troupe: merge troupe/${id}--ghost`, 'ghost');
        return base.commit(...args);
      },
    }));
    try {
      await sh(w.repo, 'branch', 'ghost');
      const ghost = join(w.repo, '..', `ghost-${Date.now()}`);
      await sh(w.repo, 'worktree', 'add', '-q', ghost, 'ghost');
      writeFiles(ghost, { 'ghost.txt': 'superseded\n' });
      await sh(ghost, 'add', '-A');
      await sh(ghost, 'commit', '-qm', 'ghost work');
      const script = {
        agents: {
          dev: [{ reply: 'done', write: { 'dev.txt': 'dev\n' } }],
          rev: [{ reply: 'nothing to change' }],
        },
        gates: {},
        human: {},
      };
      const twoStages = {
        ...pipeline(agent('dev', { handoffs: [handoff('rev')] }), agent('rev')),
        workspace: inWorktree.workspace,
      };
      id = w.service(w.store).start({ pipeline: twoStages, input: 'go', script });
      await w.service(w.store).continue(id);
      const log = [...w.store.events(id)];
      const commits = log.filter((e) => e.type === 'workspace_committed');
      expect(commits.map((e) => ('stage' in e ? e.stage : null))).toEqual([1]);
      expect(await sh(w.repo, 'show', 'main:dev.txt')).toBe('dev');
      const merged = log.find((e) => e.type === 'workspace_merged');
      expect(merged && 'stray' in merged ? merged.stray : null).toMatchObject({
        tag: `troupe/stray/${id}/1`,
      });
      expect(await sh(w.repo, 'ls-tree', '--name-only', 'main')).not.toContain('ghost.txt');
    } finally {
      w.close();
    }
  });

  it('a run whose lease was taken over while its stage ran does no git work at all', async () => {
    const w = await world();
    try {
      const id = w.service(w.store).start({ pipeline: inWorktree, input: 'go', script: writesAFile });
      // taken over as soon as the stage has started: the store this run writes through is fenced
      const fenced = new Proxy(w.store, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver);
          if (key !== 'append') return typeof value === 'function' ? value.bind(target) : value;
          return (...args: Parameters<EventStore['append']>) => {
            const stored = target.append(...args);
            if (args[1].some((e) => e.type === 'stage_started')) w.rival.tryLease(id, currentHolder());
            return stored;
          };
        },
      });
      const start = await rev(w.repo, 'main');
      await expect(w.service(fenced).continue(id)).rejects.toThrow(/lease of task .* was lost/);
      expect(await rev(w.repo, `troupe/${id}`)).toBe(start);
      const worktree = join(w.repo, '.troupe', 'worktrees', id);
      // not even staged: the worktree's index was never touched
      expect(await status(worktree)).toBe('?? late.txt');
      expect(await sh(w.repo, 'for-each-ref', '--format=%(refname)', 'refs/heads/')).not.toMatch(/late/);
      expect(types(w.rival.events(id))).not.toContain('stage_completed');
    } finally {
      w.close();
    }
  });
});

/**
 * The review's D2 (../shared/reviews/2026-12-03-distributed.md, 2b): two workers in one project
 * directory share the task's worktree. Stage s1 writes `s1.txt` ("partial by <pid>"), sleeps,
 * then writes its final `s1.txt` and `from-<pid>-s1.txt`, a file only that attempt writes.
 */
const stalledPipeline = `workspace: {isolation: worktree, merge: on_complete}
agents:
  - id: s1
    runtime: command
    permissions: edit
    command: [sh, -c, 'echo "partial by $$" > s1.txt; sleep 3; echo "final by $$ $TROUPE_TASK_ID $TROUPE_STAGE $TROUPE_ATTEMPT" > s1.txt; echo "$$" > from-$$-s1.txt; echo "wrote from-$$-s1.txt"']
    handoffs: [{to: s2}]
  - id: s2
    runtime: command
    permissions: edit
    command: [sh, -c, 'echo s2 > s2.txt; echo "s2 $TROUPE_TASK_ID $TROUPE_STAGE $TROUPE_ATTEMPT"']
`;

/** The task's events, straight from the database. */
async function logOf(db: TestDatabase, taskId: string) {
  const rows = await db.query<{ seq: string; type: string; data: string }>(
    'SELECT seq, type, data FROM events WHERE task_id = $1 ORDER BY seq',
    [taskId],
  );
  return rows.map((row) => ({
    seq: Number(row.seq),
    type: row.type,
    data: JSON.parse(row.data) as Record<string, unknown>,
  }));
}

/** Who wrote the worktree's `s1.txt` last ("partial by <pid>"), or undefined. */
function partialBy(worktree: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(join(worktree, 's1.txt'), 'utf8');
  } catch {
    return undefined; // not written yet, or removed by a takeover's clean before the stage writes it again
  }
  const match = /^partial by (\d+)/.exec(text);
  return match ? Number(match[1]) : undefined;
}

const signal = (pids: number[], sig: NodeJS.Signals) => {
  for (const pid of pids)
    try {
      process.kill(pid, sig);
    } catch {}
};

describe.skipIf(unreachable)(
  `a worker stalled past its lease${unreachable ? `: ${unreachable}` : ''}`,
  () => {
    it.each([
      ['A', 'the worker alone is stopped; its stage ends during the stall'],
      ['B', 'the worker and its stage are stopped, as on a paused VM'],
    ])(
      'variant %s (%s): nothing of the superseded attempt reaches the task branch or base',
      async (variant) => {
        await using db = await testDatabase();
        const dir = await tmpRepo({ 'README.md': 'hi\n' });
        writeFiles(dir, { 'p.yaml': stalledPipeline });
        const env = { TROUPE_STORE: `${db.url}?lease_seconds=3`, TROUPE_QUEUE: '' };
        const workers: WorkerProcess[] = [];
        const logs = () => workers.map((w) => `--- worker ${w.pid}\n${w.stderr()}`).join('\n');
        let stopped: number[] = [];
        try {
          const stalled = await startWorker(dir, '', ['--runtimes', 'command', '--concurrency', '1'], env);
          workers.push(stalled);
          const run = await troupe(dir, ['run', 'stall', '--file', 'p.yaml', '--detach'], env);
          expect([run.code, run.stderr]).toEqual([0, '']);
          const taskId = run.stdout.trim();
          const worktree = join(dir, '.troupe', 'worktrees', taskId);
          const firstAttempt = await waitFor(() => partialBy(worktree), 30_000);

          stopped = [stalled.pid, ...(variant === 'B' ? taggedPids(`${taskId}/`) : [])];
          signal(stopped, 'SIGSTOP');
          const other = await startWorker(dir, '', ['--runtimes', 'command', '--concurrency', '1'], env);
          workers.push(other);
          // the lease runs out unrenewed; the other worker takes the task over and starts s1 again
          await waitFor(async () => {
            const resumed = (await logOf(db, taskId)).some(
              (e) => e.type === 'task_resumed' && e.data.pid === other.pid,
            );
            const by = partialBy(worktree);
            return resumed && by !== undefined && by !== firstAttempt ? true : undefined;
          }, 60_000).catch((error: Error) => {
            throw new Error(`${error.message}: no takeover\n${logs()}`);
          });
          signal(stopped.filter(alive), 'SIGCONT');
          stopped = [];

          const log = await waitFor(async () => {
            const events = await logOf(db, taskId);
            return events.some((e) => e.type === 'task_completed') ? events : undefined;
          }, 60_000).catch((error: Error) => {
            throw new Error(`${error.message}: the task did not complete\n${logs()}`);
          });
          // the stalled worker has woken, seen its lease gone, and given the task up
          await waitFor(
            () => (stalled.stderr().includes(`${taskId}: lease lost`) ? true : undefined),
            30_000,
          ).catch((error: Error) => {
            throw new Error(`${error.message}: the stalled worker said nothing of its lease\n${logs()}`);
          });
          const trace = `${logs()}\n${log.map((e) => `${e.seq} ${e.type} ${JSON.stringify(e.data).slice(0, 120)}`).join('\n')}`;

          // each stage completed once, by the attempts the log recorded
          expect(
            log.filter((e) => e.type === 'stage_completed').map((e) => e.data.stage),
            trace,
          ).toEqual([1, 2]);
          const s1 = log.find((e) => e.type === 'stage_completed' && e.data.stage === 1)!;
          const recordedFile = /wrote (from-\d+-s1\.txt)/.exec(String(s1.data.output))![1]!;
          expect(recordedFile, trace).not.toBe(`from-${firstAttempt}-s1.txt`);

          // base holds only the recorded attempt's files
          const inBase = (await sh(dir, 'ls-tree', '--name-only', 'main')).split('\n');
          expect(
            inBase.filter((f) => f.startsWith('from-')),
            trace,
          ).toEqual([recordedFile]);
          expect(await sh(dir, 'show', 'main:s1.txt'), trace).not.toContain(`final by ${firstAttempt} `);

          // the task branch held only commits the log recorded, and ended at the last of them: what
          // the merge brought into base (the branch itself goes with the merge)
          const recorded = log
            .filter((e) => e.type === 'workspace_committed')
            .map((e) => e.data.sha as string);
          const merged = String(log.find((e) => e.type === 'workspace_merged')?.data.sha);
          const [, ...parents] = (await sh(dir, 'rev-list', '--parents', '-n', '1', merged))
            .trim()
            .split(' ');
          const branchTip = parents.length === 2 ? parents[1]! : merged;
          const onBranch = (await sh(dir, 'rev-list', `main@{1}..${branchTip}`)).split('\n').filter(Boolean);
          expect(
            onBranch.every((sha) => recorded.includes(sha)),
            `${trace}\nbranch: ${onBranch}\nrecorded: ${recorded}`,
          ).toBe(true);
          expect(branchTip, trace).toBe(recorded.at(-1));
          expect(log.find((e) => e.type === 'workspace_merged')?.data.stray, trace).toBeUndefined();
          expect(await Promise.all(workers.map((w) => w.stop()))).toEqual([0, 0]);
        } finally {
          signal(stopped, 'SIGCONT');
          for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
        }
      },
      180_000,
    );
  },
);

describe('the idempotency key of an agent and a gate', () => {
  it('every command agent and command gate gets TROUPE_TASK_ID, TROUPE_STAGE and TROUPE_ATTEMPT', async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: probe
    runtime: command
    command: [sh, -c, 'echo "agent $TROUPE_TASK_ID $TROUPE_STAGE $TROUPE_ATTEMPT"']
    gate: {type: command, command: 'if [ -f gate-seen ]; then exit 0; fi; touch gate-seen; echo "gate $TROUPE_TASK_ID $TROUPE_STAGE $TROUPE_ATTEMPT"; exit 1'}
`,
    });
    const run = await troupe(dir, ['run', 'go', '--file', 'p.yaml', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const id = JSON.parse(run.stdout).id as string;
    const log = eventLog(dir, id);
    expect(log.filter((e) => e.type === 'stage_completed').map((e) => e.data.output)).toEqual([
      `agent ${id} 1 1\n`,
      `agent ${id} 2 1\n`,
    ]);
    expect(log.find((e) => e.type === 'gate_decided')?.data.reason).toContain(`gate ${id} 1 1`);
  });
});
