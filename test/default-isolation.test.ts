import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { read, sh, status, tmpRepo, writeFiles } from './support/git-repo.js';
import { eventLog, project, troupe, troupeJson } from './support/troupe.js';

/** Pipelines without `workspace:`: where a task works is decided when it starts. */

const pipeline = (permissions: string, workspace = '') => `${workspace}agents:
  - id: dev
    runtime: claude
${permissions ? `    permissions: ${permissions}\n` : ''}    handoffs: [{to: reviewer}]
  - id: reviewer
    runtime: claude
`;
const script = `agents:
  dev:
    - reply: "added health"
      write: {src/health.ts: "export const ok = true;\\n"}
  reviewer:
    - reply: "looks fine"
`;

async function repoWith(agentsYaml: string): Promise<string> {
  const repo = await tmpRepo();
  writeFiles(repo, { '.troupe/pipelines/default.yaml': agentsYaml, 'script.yaml': script });
  await sh(repo, 'add', '-A');
  await sh(repo, 'commit', '-qm', 'pipeline');
  return repo;
}

function chosen(dir: string, id: string) {
  return eventLog(dir, id).find((e) => e.type === 'isolation_chosen')?.data;
}

describe('default isolation', () => {
  it('a pipeline with an edit agent gets a worktree in a git repo without any workspace: setting', async () => {
    const repo = await repoWith(pipeline('edit'));
    const { code, json } = await troupeJson(repo, ['run', 'add /health', '--script', 'script.yaml']);
    expect(json.error).toBeNull();
    expect(code).toBe(0);
    expect(chosen(repo, json.id)).toMatchObject({ isolation: 'worktree', reason: 'agent dev edits code' });
    const log = eventLog(repo, json.id);
    expect(log.find((e) => e.type === 'workspace_ready')?.data).toMatchObject({
      branch: `troupe/${json.id}`,
      path: join(repo, '.troupe', 'worktrees', json.id),
    });
    // the documented defaults: a commit per stage that changed something, merged at completion
    expect(log.filter((e) => e.type === 'workspace_committed')).toHaveLength(1);
    expect(log.find((e) => e.type === 'workspace_merged')?.data).toMatchObject({ into: 'main' });
    expect(await sh(repo, 'log', 'main', '--format=%B', '-n', '1')).toContain('Troupe-Agent: dev');
    expect(await status(repo)).toBe('');

    const shown = await troupe(repo, ['status', json.id]);
    expect(shown.stdout).toContain(`workspace: worktree troupe/${json.id}`);
    expect(shown.stdout).toContain('(default: agent dev edits code)');
    const asJson = await troupeJson<{ workspace: unknown }>(repo, ['status', json.id]);
    expect(asJson.json.workspace).toMatchObject({
      isolation: 'worktree',
      why: 'default: agent dev edits code',
      branch: `troupe/${json.id}`,
    });
  });

  it('the same pipeline outside a git repo runs in place', async () => {
    const dir = project({ '.troupe/pipelines/default.yaml': pipeline('edit'), 'script.yaml': script });
    const { code, json } = await troupeJson(dir, ['run', 'add /health', '--script', 'script.yaml']);
    expect(json.error).toBeNull();
    expect(code).toBe(0);
    expect(chosen(dir, json.id)).toMatchObject({ isolation: 'none', reason: 'not in a git repository' });
    expect(eventLog(dir, json.id).some((e) => e.type === 'workspace_ready')).toBe(false);
    expect(read(dir, 'src/health.ts')).toBe('export const ok = true;\n');
    expect((await troupe(dir, ['status', json.id])).stdout).toContain(
      'workspace: in place (default: not in a git repository)',
    );
  });

  it('isolation: none opts out in a git repo', async () => {
    const repo = await repoWith(pipeline('full', 'workspace: {isolation: none}\n'));
    const { json } = await troupeJson(repo, ['run', 'add /health', '--script', 'script.yaml']);
    expect(json.status).toBe('completed');
    expect(chosen(repo, json.id)).toBeUndefined();
    expect(eventLog(repo, json.id).some((e) => e.type === 'workspace_ready')).toBe(false);
    expect(existsSync(join(repo, '.troupe', 'worktrees', json.id))).toBe(false);
    expect(read(repo, 'src/health.ts')).toBe('export const ok = true;\n');
  });

  it('a pipeline whose agents do not edit runs in place in a git repo', async () => {
    for (const permissions of ['read_only', '']) {
      const repo = await repoWith(pipeline(permissions));
      const { json } = await troupeJson(repo, ['run', 'review', '--script', 'script.yaml']);
      expect(json.status).toBe('completed');
      // nothing to choose: no event, as before the default existed
      expect(chosen(repo, json.id)).toBeUndefined();
      expect(eventLog(repo, json.id).some((e) => e.type === 'workspace_ready')).toBe(false);
      expect(await sh(repo, 'branch', '--list', 'troupe/*')).toBe('');
    }
  });

  it('a dirty main checkout is not touched: the task completes, its work left on the task branch for troupe merge', async () => {
    const repo = await repoWith(pipeline('edit'));
    // the user's own file where the task adds one: merging would overwrite it
    writeFiles(repo, { 'src/health.ts': 'my own edit in progress\n' });
    const { code, json } = await troupeJson(repo, ['run', 'add /health', '--script', 'script.yaml']);
    expect(json.status).toBe('completed');
    expect(code).toBe(0);
    expect(chosen(repo, json.id)).toMatchObject({ isolation: 'worktree' });
    expect(eventLog(repo, json.id).find((e) => e.type === 'workspace_merge_failed')?.data).toMatchObject({
      into: 'main',
    });
    const shown = (await troupe(repo, ['status', json.id])).stdout;
    expect(shown).toContain('not merged into main');
    expect(shown).toContain(
      'would overwrite uncommitted changes to src/health.ts; troupe will not touch them',
    );
    expect(shown).toContain(`troupe merge ${json.id}`);
    expect(read(repo, 'src/health.ts')).toBe('my own edit in progress\n');
    expect(await sh(repo, 'show', `troupe/${json.id}:src/health.ts`)).toBe('export const ok = true;');
    expect(await sh(repo, 'show', 'main:README.md')).toBe('hello');
  });

  it('validate says what a run will choose', async () => {
    const repo = await repoWith(pipeline('edit'));
    const edit = await troupe(repo, ['validate']);
    expect(edit.stdout).toContain('worktree in a git repo (agent dev edits code)');
    writeFiles(repo, { '.troupe/pipelines/default.yaml': pipeline('read_only') });
    expect((await troupe(repo, ['validate'])).stdout).not.toContain('worktree');
  });
});

describe('a fresh repository', () => {
  const outside = project({ 'script.yaml': script });

  it('after troupe init, the first task that edits code merges: troupe’s own files do not count as changes', async () => {
    const repo = await tmpRepo();
    // a named runtime: on its own, init picks from the CLIs of the machine it runs on
    const init = await troupe(repo, ['init', '--runtime', 'claude']);
    expect(init.code).toBe(0);
    expect(init.stdout).toContain('created .troupe/.gitignore');
    // the user makes the starter team edit code
    writeFiles(repo, { '.troupe/pipelines/default.yaml': pipeline('edit') });
    const { code, json } = await troupeJson(repo, [
      'run',
      'add /health',
      '--script',
      join(outside, 'script.yaml'),
    ]);
    expect([code, json.error]).toEqual([0, null]);
    expect(eventLog(repo, json.id).find((e) => e.type === 'workspace_merged')?.data).toMatchObject({
      into: 'main',
    });
    expect(read(repo, 'src/health.ts')).toBe('export const ok = true;\n');
    // what is left to commit is what people write; the task store and task files are ignored
    await sh(repo, 'add', '-A');
    expect((await sh(repo, 'diff', '--cached', '--name-only')).split('\n')).toEqual([
      '.troupe/.gitignore',
      '.troupe/config.yaml',
      '.troupe/pipelines/default.yaml',
    ]);
  });

  it('without a first commit, the task fails saying to make one', async () => {
    const repo = project({ '.troupe/pipelines/default.yaml': pipeline('edit') });
    await sh(repo, 'init', '-q', '--initial-branch=master');
    const run = await troupe(repo, ['run', 'add /health', '--script', join(outside, 'script.yaml')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /✘ failed T-[0-9A-F]{6}: master in .* has no commit yet, and a task's worktree starts from one: make a first commit, then run again/,
    );
  });
});
