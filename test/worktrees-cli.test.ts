import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commitStage } from '../src/workspace/commit.js';
import { ensureTaskWorktree } from '../src/workspace/task-worktree.js';
import { rev, sh, tmpRepo, writeFiles } from './support/git-repo.js';
import { project, spawnTroupe, troupe, waitFor } from './support/troupe.js';

/** `troupe worktrees`, `merge` and `pr` through the built binary, on real temporary repositories. */

const files = project({
  'pipeline.yaml': 'agents:\n  - id: developer\n    runtime: scripted\n',
  'script.yaml': 'agents:\n  developer: ["done"]\n',
});

/** A completed task in the store (run offline) with a worktree holding one commit. */
async function completedTask(repo: string, file: string) {
  const run = await troupe(repo, [
    'run',
    `make ${file}`,
    '--file',
    join(files, 'pipeline.yaml'),
    '--script',
    join(files, 'script.yaml'),
    '--json',
  ]);
  const id = (JSON.parse(run.stdout) as { id: string; status: string }).id;
  const wt = await ensureTaskWorktree({ repo, taskId: id, base: 'main' });
  writeFiles(wt.path, { [file]: `${file}\n` });
  const sha = (await commitStage({ path: wt.path, message: file }))!;
  return { id, wt, sha };
}

async function json<T>(cwd: string, args: string[]): Promise<T> {
  const result = await troupe(cwd, [...args, '--json']);
  if (result.code !== 0) throw new Error(`exit ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

interface Row {
  task: string;
  status: string;
  branch: string;
  ahead: number;
  merged: boolean;
  dirty: boolean;
  path: string;
}
interface Prune {
  dryRun: boolean;
  actions: Array<{
    task: string;
    action: string;
    reasons: string[];
    archivedAs: string | null;
    running: boolean;
  }>;
}

describe('troupe worktrees / merge (the real binary)', () => {
  it('lists, merges, and prunes only what is ended and merged; --dry-run changes nothing', async () => {
    const repo = await tmpRepo();
    const merged = await completedTask(repo, 'merged.txt');
    const unmerged = await completedTask(repo, 'unmerged.txt');
    const running = await ensureTaskWorktree({ repo, taskId: 'T-elsewhere', base: 'main' });

    const list = await json<Row[]>(repo, ['worktrees', 'list']);
    expect(list.map((r) => [r.task, r.status, r.branch, r.ahead, r.merged])).toEqual(
      [
        [merged.id, 'completed', `troupe/${merged.id}`, 1, false],
        [unmerged.id, 'completed', `troupe/${unmerged.id}`, 1, false],
        ['T-elsewhere', 'unknown', 'troupe/T-elsewhere', 0, true],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    const human = await troupe(repo, ['worktrees']);
    expect(human.stdout).toMatch(/^TASK\s+STATUS\s+KIND\s+BRANCH\s+AHEAD\/BEHIND\s+STATE\s+PATH/);
    expect(human.stdout).toContain(`.troupe/worktrees/${merged.id}`);

    expect(await json(repo, ['merge', merged.id])).toEqual({
      merged: 'fast-forward',
      base: 'main',
      branch: `troupe/${merged.id}`,
      sha: merged.sha,
    });
    expect(await rev(repo, 'main')).toBe(merged.sha);

    const dry = await json<Prune>(repo, ['worktrees', 'prune', '--dry-run']);
    const byTask = Object.fromEntries(dry.actions.map((a) => [a.task, a]));
    expect(byTask[merged.id]).toMatchObject({ action: 'remove', reasons: [] });
    expect(byTask[unmerged.id]).toMatchObject({
      action: 'keep',
      reasons: ['commits not merged into main and not pushed'],
    });
    expect(byTask['T-elsewhere']).toMatchObject({ action: 'keep', reasons: ['task has not ended'] });
    expect(existsSync(merged.wt.path)).toBe(true);

    const forcedDry = await json<Prune>(repo, ['worktrees', 'prune', '--dry-run', '--force']);
    expect(forcedDry.actions.find((a) => a.task === unmerged.id)).toMatchObject({
      action: 'remove',
      archivedAs: `troupe/archive/${unmerged.id}`,
    });
    expect(existsSync(unmerged.wt.path)).toBe(true);
    expect(await sh(repo, 'tag', '--list')).toBe('');

    const pruned = await troupe(repo, ['worktrees', 'prune']);
    expect(pruned.code).toBe(0);
    expect(pruned.stdout).toContain(`removed       ${merged.id}`);
    expect(pruned.stdout).toContain('2 kept; `troupe worktrees prune --force` removes them too');
    expect(existsSync(merged.wt.path)).toBe(false);
    expect(existsSync(unmerged.wt.path) && existsSync(running.path)).toBe(true);
    expect(await rev(repo, `troupe/${unmerged.id}`)).toBe(unmerged.sha);
  });

  it('prune --force keeps the worktree of a task that is running, and says why', async () => {
    const repo = await tmpRepo();
    const release = join(project(), 'release');
    // an editing agent that has written its work and goes on until the test releases it
    const agent = `require('fs').writeFileSync('work.txt', 'work\\n'); const t = setInterval(() => { if (require('fs').existsSync(process.argv[1])) { clearInterval(t); console.log('done'); } }, 20);`;
    const dir = project({
      'pipeline.yaml': `agents:\n  - id: developer\n    runtime: command\n    permissions: edit\n    command: [node, -e, ${JSON.stringify(agent)}, ${JSON.stringify(release)}]\n`,
    });
    const child = spawnTroupe(repo, ['run', 'edit', '--file', join(dir, 'pipeline.yaml')]);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const id = await waitFor(() => /troupe (T-[0-9A-F]{6})/.exec(stderr)?.[1]);
    try {
      const worktree = join(repo, '.troupe', 'worktrees', id);
      await waitFor(() => (existsSync(join(worktree, 'work.txt')) ? true : undefined));

      const forced = await json<Prune>(repo, ['worktrees', 'prune', '--force']);
      expect(forced.actions).toMatchObject([
        {
          task: id,
          action: 'keep',
          running: true,
          reasons: [`task is running (process ${child.pid})`, 'uncommitted changes'],
        },
      ]);
      const human = await troupe(repo, ['worktrees', 'prune', '--force']);
      expect(human.stdout).toContain(
        `kept          ${id}  .troupe/worktrees/${id} [troupe/${id}]: task is running`,
      );
      expect(human.stdout).toContain(
        `1 kept because its task is running, even with --force: wait for ${id} to end`,
      );
      expect(existsSync(join(worktree, 'work.txt'))).toBe(true);
    } finally {
      writeFileSync(release, '');
    }
    const run = await child;
    expect([run.exitCode, stderr]).toEqual([0, expect.stringContaining('completed')]);
    // its work reached base, and the merged worktree and branch went with the merge
    expect(await sh(repo, 'show', 'main:work.txt')).toBe('work');
    expect(existsSync(join(repo, '.troupe', 'worktrees', id))).toBe(false);
  });

  it('merge refuses a main checkout with uncommitted changes the merge would overwrite', async () => {
    const repo = await tmpRepo();
    const task = await completedTask(repo, 'x.txt');
    writeFiles(repo, { 'x.txt': 'my edit\n' });
    const result = await troupe(repo, ['merge', task.id]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'would overwrite uncommitted changes to x.txt; troupe will not touch them',
    );
    expect(result.stderr).toContain(`hint: commit or stash them there, then run \`troupe merge ${task.id}\``);
    expect(readFileSync(join(repo, 'x.txt'), 'utf8')).toBe('my edit\n');
  });

  it('outside a git repository: a usage error', async () => {
    const result = await troupe(project(), ['worktrees', 'list']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('not inside a git repository');
  });
});

describe('troupe pr (the real binary)', () => {
  /** A PATH with node and git only, plus any fake tools given. */
  function path(tools: Record<string, string> = {}): string {
    const bin = mkdtempSync(join(tmpdir(), 'troupe-bin-'));
    symlinkSync(process.execPath, join(bin, 'node'));
    for (const tool of ['git']) {
      const found = (process.env.PATH ?? '')
        .split(':')
        .map((d) => join(d, tool))
        .find((f) => existsSync(f));
      if (found) symlinkSync(found, join(bin, tool));
    }
    for (const [name, script] of Object.entries(tools)) {
      writeFileSync(join(bin, name), script);
      chmodSync(join(bin, name), 0o755);
    }
    return bin;
  }

  it('without gh: changes nothing and prints the push and PR commands to run', async () => {
    const repo = await tmpRepo();
    const task = await completedTask(repo, 'x.txt');
    const result = await troupe(repo, ['pr', task.id], { PATH: path() });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('gh (the GitHub CLI) is not on PATH');
    expect(result.stderr).toContain(`git push --set-upstream origin troupe/${task.id}`);
    expect(result.stderr).toContain(`gh pr create --head troupe/${task.id} --base main --title 'make x.txt'`);
  });

  it('with gh: pushes the branch and opens the pull request', async () => {
    const repo = await tmpRepo();
    const remote = mkdtempSync(join(tmpdir(), 'troupe-remote-'));
    await sh(remote, 'init', '-q', '--bare');
    await sh(repo, 'remote', 'add', 'origin', remote);
    const task = await completedTask(repo, 'x.txt');
    const log = join(mkdtempSync(join(tmpdir(), 'troupe-gh-')), 'argv');
    mkdirSync(join(log, '..'), { recursive: true });
    const gh = `#!/bin/sh\nprintf '%s\\n' "$@" > '${log}'\necho https://github.com/o/r/pull/7\n`;
    const result = await troupe(repo, ['pr', task.id, '--json'], { PATH: path({ gh }) });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      url: 'https://github.com/o/r/pull/7',
      branch: `troupe/${task.id}`,
      base: 'main',
      existing: false,
    });
    expect(await rev(remote, `troupe/${task.id}`)).toBe(task.sha);
    const argv = readFileSync(log, 'utf8').split('\n');
    expect(argv.slice(0, 8)).toEqual([
      'pr',
      'create',
      '--head',
      `troupe/${task.id}`,
      '--base',
      'main',
      '--title',
      'make x.txt',
    ]);
  });
});
