import { realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sh, tmpRepo, writeFiles } from './support/git-repo.js';
import { eventLog, spawnTroupe, troupe, troupeJson, waitFor } from './support/troupe.js';

/** lead fans out to left and right, which both hand off to join (the agent that gets {{ branches }}). */
const pipeline = (extra = '') => `workspace: {isolation: worktree, merge: on_complete}
agents:
  - id: lead
    runtime: claude
    handoffs: [{to: "left, right"}]
  - id: left
    runtime: claude
    handoffs: [{to: join}]
  - id: right
    runtime: claude
    handoffs: [{to: join}]
  - id: join
    runtime: claude
${extra}  - id: fixer
    runtime: claude
`;

const pwd = (file: string) => `[node, -e, "require('fs').writeFileSync('${file}', process.cwd())"]`;

/** Both branches edit `shared` (or their own files when `shared` is false). */
const script = (shared: boolean, delay = 150) => `agents:
  lead:
    - reply: "split the work"
      write: {shared.txt: "base\\n"}
  left:
    - reply: "left done"
      delay_ms: ${delay}
      write: {${shared ? 'shared.txt: "from left\\n"' : 'left.txt: "L\\n"'}}
      run: ${pwd('cwd-left.txt')}
  right:
    - reply: "right done"
      delay_ms: ${delay}
      write: {${shared ? 'shared.txt: "from right\\n"' : 'right.txt: "R\\n"'}}
      run: ${pwd('cwd-right.txt')}
  join:
    - "joined"
  fixer:
    - when: "conflicts in:\\\\s+- shared.txt"
      reply: "combined both"
      write: {shared.txt: "from left\\nfrom right\\n"}
    - "the prompt did not name the conflicting file"
`;

async function setup(yaml: string, scriptYaml: string): Promise<string> {
  const repo = realpathSync(await tmpRepo());
  writeFiles(repo, { '.troupe/pipelines/default.yaml': yaml, 'script.yaml': scriptYaml });
  await sh(repo, 'add', '-A');
  await sh(repo, 'commit', '-qm', 'pipeline');
  return repo;
}

const show = (repo: string, rev: string) => sh(repo, 'show', rev).then((s) => s.trim());

/**
 * The last commit the log records on a fan-out branch: once the task is merged into base its
 * branches are removed (`workspace_removed`), but their commits stay reachable from base.
 */
function branchTip(repo: string, id: string, agent: string): string {
  const branch = `troupe/${id}--${agent}`;
  const commits = eventLog(repo, id).filter(
    (e) => e.type === 'workspace_committed' && e.data.branch === branch,
  );
  const sha = commits.at(-1)?.data.sha;
  if (typeof sha !== 'string') throw new Error(`no commit recorded on ${branch}`);
  return sha;
}

describe('fan-out branches in worktrees of their own', () => {
  it('a pipeline that gets its worktree by default (an agent edits code) gives its branches worktrees too', async () => {
    const yaml = pipeline()
      .replace('workspace: {isolation: worktree, merge: on_complete}\n', '')
      .replace(
        '  - id: left\n    runtime: claude\n',
        '  - id: left\n    runtime: claude\n    permissions: edit\n',
      );
    const repo = await setup(yaml, script(false));
    const { code, json } = await troupeJson(repo, ['run', 'go', '--script', 'script.yaml']);
    expect(json.error).toBeNull();
    expect(code).toBe(0);
    const wt = (name: string) => join(repo, '.troupe', 'worktrees', name);
    expect(await show(repo, `${branchTip(repo, json.id, 'right')}:cwd-right.txt`)).toBe(
      wt(`${json.id}--right`),
    );
    expect(await show(repo, 'main:left.txt')).toBe('L');
    expect(await show(repo, 'main:right.txt')).toBe('R');
  });

  it('two branches editing different files work in their own worktrees and merge cleanly into the task branch, then base', async () => {
    const repo = await setup(pipeline(), script(false));
    const { code, json } = await troupeJson(repo, ['run', 'go', '--script', 'script.yaml']);
    expect(json.error).toBeNull();
    expect(code).toBe(0);
    const id = json.id;
    const wt = (name: string) => join(repo, '.troupe', 'worktrees', name);
    // each branch's runtime ran in its own worktree, on its own branch
    expect(await show(repo, `${branchTip(repo, id, 'left')}:cwd-left.txt`)).toBe(wt(`${id}--left`));
    expect(await show(repo, `${branchTip(repo, id, 'right')}:cwd-right.txt`)).toBe(wt(`${id}--right`));
    expect((await sh(repo, 'ls-tree', '--name-only', branchTip(repo, id, 'left'))).split('\n')).not.toContain(
      'right.txt',
    );
    const log = eventLog(repo, id);
    const ready = log.filter((e) => e.type === 'branch_workspace_ready').map((e) => e.data.branch);
    expect(ready.sort()).toEqual([`troupe/${id}--left`, `troupe/${id}--right`]);
    const commits = log.filter((e) => e.type === 'workspace_committed').map((e) => e.data.branch ?? 'task');
    expect(commits.sort()).toEqual(['task', `troupe/${id}--left`, `troupe/${id}--right`]);
    const merged = log.find((e) => e.type === 'branches_merged')!;
    expect(merged.data).toMatchObject({ into: null });
    expect((merged.data.branches as string[]).sort()).toEqual([`troupe/${id}--left`, `troupe/${id}--right`]);
    // the join ran after the merge, in the task worktree, and both changes reached base
    const joinStart = log.findIndex((e) => e.type === 'stage_started' && e.data.agent === 'join');
    expect(log.indexOf(merged)).toBeLessThan(joinStart);
    expect(await show(repo, 'main:left.txt')).toBe('L');
    expect(await show(repo, 'main:right.txt')).toBe('R');
    // the branch commits carry the task, stage and agent
    expect(await sh(repo, 'log', '-1', '--format=%B', branchTip(repo, id, 'left'))).toContain(
      'Troupe-Agent: left',
    );
    // merged into the task branch, which is merged into base: all removed with the merge
    const removed = log.find((e) => e.type === 'workspace_removed')!;
    expect((removed.data.removed as string[]).sort()).toEqual([
      `troupe/${id}`,
      `troupe/${id}--left`,
      `troupe/${id}--right`,
    ]);
    expect(await sh(repo, 'branch', '--list', 'troupe/*')).toBe('');
    expect(await sh(repo, 'worktree', 'list', '--porcelain')).not.toContain(id);
  });

  it('a conflict goes to the on_conflict agent with the files named; nothing is overwritten', async () => {
    const repo = await setup(pipeline('    on_conflict: fixer\n'), script(true));
    const { json } = await troupeJson(repo, ['run', 'go', '--script', 'script.yaml']);
    expect(json.error).toBeNull();
    expect(json.status).toBe('completed');
    const id = json.id;
    const fixer = json.stages.find((s) => s.agent === 'fixer')!;
    expect(fixer.output).toBe('combined both');
    expect(fixer.input).toMatch(/conflicts in:\n- shared\.txt/);
    expect(fixer.input).toMatch(new RegExp(`troupe/${id}--(left|right)`));
    const log = eventLog(repo, id);
    const conflict = log.find((e) => e.type === 'branch_conflict')!.data;
    expect(conflict).toMatchObject({ files: ['shared.txt'], resolver: 'fixer' });
    // both branches keep their own commits
    expect(await show(repo, `${branchTip(repo, id, 'left')}:shared.txt`)).toBe('from left');
    expect(await show(repo, `${branchTip(repo, id, 'right')}:shared.txt`)).toBe('from right');
    // the fixer's combination is what the join and base got; the join ran after it
    expect(await show(repo, 'main:shared.txt')).toBe('from left\nfrom right');
    expect(json.stages.map((s) => s.agent).slice(-2)).toEqual(['fixer', 'join']);
  });

  it('without on_conflict the task waits for a person, and their answer continues it', async () => {
    const repo = await setup(pipeline(), script(true));
    const first = await troupeJson(repo, ['run', 'go', '--script', 'script.yaml']);
    expect(first.json.status).toBe('awaiting_human_input');
    const id = first.json.id;
    const question = first.json.waiting!.questions.join('\n');
    expect(question).toContain('shared.txt');
    const branch = /fan-out branch (troupe\/\S+--(?:left|right))/.exec(question)?.[1];
    expect(branch).toBeDefined();
    expect(first.json.stages.some((s) => s.agent === 'join')).toBe(false);
    // the person resolves it in the task worktree (left uncommitted), then answers
    const taskTree = join(repo, '.troupe', 'worktrees', id);
    expect(await sh(taskTree, 'status', '--porcelain')).toBe('');
    writeFileSync(join(taskTree, 'shared.txt'), 'by hand\n');
    const answered = await troupeJson(repo, ['human-input', id, 'merged by hand']);
    expect(answered.json.error).toBeNull();
    expect(answered.json.status).toBe('completed');
    expect(await show(repo, 'main:shared.txt')).toBe('by hand');
    expect(await show(repo, `${branch}:shared.txt`)).toMatch(/^from (left|right)$/);
  });

  it('kill -9 during a branch stage, then resume: the branch worktree is reused and no commit is lost', async () => {
    const slow = script(false, 1500).replace(
      '  right:\n    - reply: "right done"\n      delay_ms: 1500',
      '  right:\n    - reply: "right done"\n      delay_ms: 50',
    );
    const repo = await setup(pipeline(), slow);
    const child = spawnTroupe(repo, ['run', 'go', '--script', 'script.yaml']);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const id = await waitFor(() => /troupe (T-[0-9A-F]{6})/.exec(stderr)?.[1]);
    // right's stage committed on its branch, left's still running
    await waitFor(
      () =>
        eventLog(repo, id).some(
          (e) => e.type === 'workspace_committed' && e.data.branch === `troupe/${id}--right`,
        )
          ? true
          : undefined,
      15_000,
    );
    const rightCommit = (await sh(repo, 'rev-parse', `troupe/${id}--right`)).trim();
    child.kill('SIGKILL');
    await child;
    const before = eventLog(repo, id).filter((e) => e.type === 'branch_workspace_ready');
    expect(before).toHaveLength(2);
    const resumed = await troupeJson(repo, ['resume', id]);
    expect(resumed.json.error).toBeNull();
    expect(resumed.json.status).toBe('completed');
    const log = eventLog(repo, id);
    // the same two branch worktrees: none made again
    expect(log.filter((e) => e.type === 'branch_workspace_ready')).toHaveLength(2);
    expect(await show(repo, `${branchTip(repo, id, 'left')}:cwd-left.txt`)).toBe(
      join(repo, '.troupe', 'worktrees', `${id}--left`),
    );
    // right's commit survived and is in base; right ran once
    expect(await sh(repo, 'merge-base', '--is-ancestor', rightCommit, 'main').then(() => 'yes')).toBe('yes');
    expect(resumed.json.stages.filter((s) => s.agent === 'right')).toHaveLength(1);
    expect(await show(repo, 'main:left.txt')).toBe('L');
  }, 30_000);

  it('troupe validate reports an on_conflict agent that does not exist, with its position', async () => {
    const repo = await setup(pipeline('    on_conflict: fixr\n'), script(true));
    const result = await troupe(repo, ['validate', '.troupe/pipelines/default.yaml']);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toMatch(
      /default\.yaml:14:\d+: .*on_conflict agent `fixr` does not exist/,
    );
  });
});
