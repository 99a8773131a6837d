import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectAdapters } from '../src/app/task-adapters.js';
import { currentHolder, type EventStore } from '../src/core/event-store.js';
import type { StoredEvent } from '../src/core/events.js';
import type { TaskWorkspace } from '../src/core/task-workspace.js';
import { TaskService } from '../src/engine/task-service.js';
import { agent, pipeline } from '../src/engine/test-pipelines.js';
import { defaultConfig } from '../src/pipeline/config.js';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import { gitWorkspace } from '../src/workspace/task-workspace.js';
import { rev, sh, status, tmpRepo } from './support/git-repo.js';
import { dropSchemas, PG_URL, postgresUnreachable, scratchSchemaName } from './support/postgres.js';

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
  return { repo, store, rival, service, close: () => (store.close(), rival.close()) };
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
