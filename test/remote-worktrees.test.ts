import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectTaskService } from '../src/app/project.js';
import type { Pipeline } from '../src/core/pipeline.js';
import type { Script } from '../src/core/script.js';
import { agent, handoff, pipeline } from '../src/engine/test-pipelines.js';
import { defaultConfig } from '../src/pipeline/config.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { originAndClones, rev, sh, writeFiles } from './support/git-repo.js';
import { troupeJson } from './support/troupe.js';

/**
 * `workspace: {remote: origin}` through the real executor: one task store shared by two
 * "machines" (separate clones of a bare origin), the task started on one and finished on the other.
 */

const remotePipeline: Pipeline = {
  ...pipeline(
    agent('dev', { handoffs: [handoff('review')] }),
    agent('review', {
      human_input: { enabled: true, mode: 'before', prompt: 'carry on?' },
      handoffs: [handoff('left, right')],
    }),
    agent('left', { handoffs: [handoff('join')] }),
    agent('right', { handoffs: [handoff('join')] }),
    agent('join'),
  ),
  workspace: {
    isolation: 'worktree',
    base: 'main',
    merge: 'on_complete',
    branch_prefix: 'troupe/',
    remote: 'origin',
  },
};

const script: Script = {
  agents: {
    dev: [{ reply: 'stage 1', write: { 'one.txt': '1\n' } }],
    review: [{ reply: 'stage 2', write: { 'two.txt': '2\n' } }],
    left: [{ reply: 'left', write: { 'left.txt': 'L\n' } }],
    right: [{ reply: 'right', write: { 'right.txt': 'R\n' } }],
    join: ['joined'],
  },
  gates: {},
  human: {},
};

const filesAt = async (repo: string, ref: string) =>
  (await sh(repo, 'ls-tree', '--name-only', ref)).split('\n').filter(Boolean).sort();

describe('a task that moves between machines (workspace: {remote: origin})', () => {
  it('stage 1 on machine A, the rest on machine B from the pushed branch, merged into origin’s base once', async () => {
    const { origin, clones } = await originAndClones(2);
    const [a, b] = clones as [string, string];
    // the stand-in for the shared PostgreSQL store
    const store = openSqliteStore(join(dirname(a), 'shared.db'));
    const onA = projectTaskService(a, store, defaultConfig());
    const onB = projectTaskService(b, store, defaultConfig());

    const id = onA.start({ pipeline: remotePipeline, input: 'go', script, cwd: a });
    const paused = await onA.continue(id);
    expect(paused.status).toBe('awaiting_human_input');
    expect(paused.workspace?.path).toBe(join(a, '.troupe', 'worktrees', id));
    expect(await filesAt(origin, `troupe/${id}`)).toEqual(['README.md', 'one.txt']);

    onB.answer(id, 'yes');
    const done = await onB.continue(id);
    expect(done.status).toBe('completed');
    expect(done.workspace?.path).toBe(join(b, '.troupe', 'worktrees', id));
    expect(done.stages.map((s) => s.agent)).toEqual(['dev', 'review', 'left', 'right', 'join']);
    const moved = [...store.events(id)].filter((e) => e.type === 'workspace_ready');
    expect(moved.map((e) => ('path' in e ? e.path : ''))).toEqual([
      join(a, '.troupe', 'worktrees', id),
      join(b, '.troupe', 'worktrees', id),
    ]);

    // every stage's commit is on origin, and origin's base has the work, merged once
    for (const stage of done.stages.filter((s) => s.commit)) {
      await sh(origin, 'merge-base', '--is-ancestor', stage.commit!, 'main');
    }
    expect(await filesAt(origin, 'main')).toEqual([
      'README.md',
      'left.txt',
      'one.txt',
      'right.txt',
      'two.txt',
    ]);
    expect(done.workspace?.merged).toBe(await rev(origin, 'main'));
    // machine A's own checkout was not touched
    expect(await filesAt(a, 'main')).toEqual(['README.md']);
    store.close();
  });

  it('troupe run on two machines at once: both tasks reach origin’s base, each merged once', async () => {
    const { origin, clones } = await originAndClones(2);
    const yaml = `workspace: {remote: origin}
agents:
  - id: dev
    runtime: claude
    permissions: edit
`;
    writeFiles(clones[0]!, { '.troupe/pipelines/default.yaml': yaml });
    await sh(clones[0]!, 'add', '-A');
    await sh(clones[0]!, 'commit', '-qm', 'pipeline');
    await sh(clones[0]!, 'push', '-q', 'origin', 'main');
    await sh(clones[1]!, 'pull', '-q', 'origin', 'main');
    // each machine's agent writes its own file (the script stays out of the commits: untracked)
    clones.forEach((clone, i) => {
      writeFiles(clone, {
        'script.yaml': `agents:\n  dev:\n    - reply: done\n      write: {machine-${i + 1}.txt: "${i + 1}\\n"}\n`,
      });
    });
    const runs = await Promise.all(
      clones.map((clone) => troupeJson(clone, ['run', 'go', '--script', 'script.yaml'])),
    );
    for (const run of runs) {
      expect(run.json.error).toBeNull();
      expect(run.code).toBe(0);
    }
    expect(await filesAt(origin, 'main')).toEqual(['.troupe', 'README.md', 'machine-1.txt', 'machine-2.txt']);
    const subjects = (await sh(origin, 'log', '--format=%s', 'main')).split('\n');
    for (const run of runs) {
      await sh(origin, 'merge-base', '--is-ancestor', `troupe/${run.json.id}`, 'main');
      expect(subjects.filter((line) => line.includes(`troupe/${run.json.id} `)).length).toBeLessThanOrEqual(
        1,
      );
    }
    // the machines' own checkouts of main are theirs: not moved
    for (const clone of clones) expect(await filesAt(clone, 'main')).toEqual(['.troupe', 'README.md']);
  });
});
