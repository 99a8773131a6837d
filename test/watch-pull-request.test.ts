import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type GitHubMock, startGitHubMock } from './fixtures/github-api/server.js';
import { rev, sh, tmpRepo, writeFiles } from './support/git-repo.js';
import { repoRoot, troupe, troupeJson } from './support/troupe.js';

/**
 * `troupe watch` ends a GitHub issue's task at a pull request: the task's branch pushed to a real
 * bare `origin`, `gh pr create` (a fake on PATH that records its argv) run once, the pull request
 * linked on the issue, then the issue handed off.
 */

const PIPELINE = `agents:
  - id: builder
    runtime: claude
    permissions: edit
    system_prompt: "Build: {{ input }}"
`;
const SCRIPT = `agents:
  builder:
    - reply: "Added the health check."
      write: {src/health.ts: "export const ok = true;\\n"}
`;
const FAKE_GH = join(repoRoot, 'test', 'fixtures', 'fake-gh');

/** PATH without any `gh` on it (the machine may have the real one). */
const PATH_WITHOUT_GH = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((dir) => {
    try {
      accessSync(join(dir, 'gh'), constants.X_OK);
      return false;
    } catch {
      return true;
    }
  })
  .join(delimiter);

describe('troupe watch opens a pull request for a completed issue', { timeout: 90_000 }, () => {
  let mock: GitHubMock;
  afterEach(async () => mock?.close());

  async function watched(extra = '') {
    mock = await startGitHubMock();
    mock.addIssue({ title: 'Add a health check' });
    const repo = await tmpRepo();
    writeFiles(repo, {
      '.troupe/pipelines/default.yaml': PIPELINE,
      'script.yaml': SCRIPT,
      '.troupe/config.yaml': `tracker:
  kind: github
  owner: ${mock.owner}
  repo: ${mock.repo}
  api_url: ${mock.url}
${extra}`,
    });
    await sh(repo, 'add', '-A');
    await sh(repo, 'commit', '-qm', 'pipeline');
    const origin = join(dirname(repo), 'origin.git');
    await sh(dirname(repo), 'init', '--quiet', '--bare', origin);
    await sh(repo, 'remote', 'add', 'origin', origin);
    await sh(repo, 'push', '--quiet', 'origin', 'main');
    const ghLog = join(dirname(repo), 'gh-calls.jsonl');
    const env = (gh: boolean) => ({
      GH_TOKEN: mock.token,
      FAKE_GH_LOG: ghLog,
      PATH: gh ? `${FAKE_GH}${delimiter}${PATH_WITHOUT_GH}` : PATH_WITHOUT_GH,
    });
    const ghCalls = (): string[][] =>
      existsSync(ghLog)
        ? readFileSync(ghLog, 'utf8')
            .trim()
            .split('\n')
            .map((l) => JSON.parse(l) as string[])
        : [];
    const watch = (gh: boolean) => troupe(repo, ['watch', '--once', '--script', 'script.yaml'], env(gh));
    return { repo, origin, watch, ghCalls };
  }

  const issue = () => mock.issues.get(1)!;
  const linkComments = () =>
    issue().comments.filter((c) => c.body.startsWith('troupe opened a pull request for this issue:'));

  it("from the task's branch, pushed to origin and left unmerged; linked; the issue handed off; a restarted watcher opens none again", async () => {
    const { repo, origin, watch, ghCalls } = await watched('  handoff_state: review\n');
    const mainBefore = await rev(repo, 'main');
    const run = await watch(true);
    expect([run.code, run.stderr]).toEqual([0, '']);
    const {
      json: [task],
    } = await troupeJson<Array<{ id: string; status: string }>>(repo, ['list']);
    expect(task!.status).toBe('completed');
    const branch = `troupe/${task!.id}`;

    const calls = ghCalls();
    expect(calls).toHaveLength(1);
    const arg = (name: string) => calls[0]![calls[0]!.indexOf(name) + 1];
    expect(calls[0]!.slice(0, 2)).toEqual(['pr', 'create']);
    expect([arg('--head'), arg('--base'), arg('--title')]).toEqual([
      branch,
      'main',
      '#1: Add a health check',
    ]);
    expect(arg('--body')).toMatch(/^Closes #1\n/);
    expect(arg('--body')).toContain(`task \`${task!.id}\``);

    // the branch really landed in the bare remote, with the agent's work; base was not touched
    expect(await rev(origin, `refs/heads/${branch}`)).toBe(await rev(repo, `refs/heads/${branch}`));
    expect(await sh(origin, 'show', `${branch}:src/health.ts`)).toBe('export const ok = true;');
    expect(await rev(repo, 'main')).toBe(mainBefore);
    expect(await rev(origin, 'main')).toBe(mainBefore);

    const url = 'https://github.com/octo-org/octo-repo/pull/1';
    expect(linkComments().map((c) => c.body)).toEqual([
      `troupe opened a pull request for this issue: ${url}`,
    ]);
    expect(issue().labels).toContain('review');
    expect(issue().comments.find((c) => c.body.startsWith('<!-- troupe:progress'))!.body).toContain(url);
    const status = await troupeJson<{ workspace: { branch: string; merged: string | null } }>(repo, [
      'status',
      task!.id,
    ]);
    expect(status.json.workspace).toMatchObject({ branch, merged: null });

    // restarted: the issue is still open (labelled review), its task completed; nothing is opened again
    const again = await watch(true);
    expect([again.code, again.stderr]).toEqual([0, '']);
    expect(ghCalls()).toHaveLength(1);
    expect(linkComments()).toHaveLength(1);
    expect(issue().labels).toContain('review');
  });

  it('without gh: one line, the issue is not handed off; the next poll with gh opens the pull request and closes it', async () => {
    const { repo, origin, watch, ghCalls } = await watched();
    const first = await watch(false);
    expect(first.code).toBe(0);
    const lines = first.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/#1: pull request not opened .*gh \(the GitHub CLI\) is not on PATH/);
    expect(first.stderr).not.toMatch(/ {4}at /);
    const {
      json: [task],
    } = await troupeJson<Array<{ id: string; status: string }>>(repo, ['list']);
    expect(task!.status).toBe('completed');
    expect(issue().state).toBe('open');
    expect(linkComments()).toEqual([]);
    expect((await sh(origin, 'branch', '--list')).trim()).toBe('main');

    const second = await watch(true);
    expect([second.code, second.stderr]).toEqual([0, '']);
    expect(ghCalls()).toHaveLength(1);
    expect(await rev(origin, `refs/heads/troupe/${task!.id}`)).toBe(await rev(repo, `troupe/${task!.id}`));
    expect(linkComments()).toHaveLength(1);
    expect(issue().state).toBe('closed');
  });

  it('pull_request: false keeps the merge into base and opens nothing', async () => {
    const { repo, watch, ghCalls } = await watched('  pull_request: false\n');
    const mainBefore = await rev(repo, 'main');
    const run = await watch(true);
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(ghCalls()).toEqual([]);
    expect(await rev(repo, 'main')).not.toBe(mainBefore);
    expect(issue().state).toBe('closed');
  });
});

describe('troupe watch on a backlog/ folder with pull_request: true', { timeout: 90_000 }, () => {
  it('opens one pull request, records it in the task file, and moves the task to its last status', async () => {
    const repo = await tmpRepo();
    writeFiles(repo, {
      '.troupe/pipelines/default.yaml': PIPELINE,
      '.troupe/config.yaml': 'tracker:\n  kind: backlog\n  pull_request: {draft: true}\n',
      'script.yaml': SCRIPT,
      'backlog/config.yml': 'statuses: ["To Do", "In Progress", "Done"]\n',
      'backlog/tasks/task-1 - Health.md':
        "---\nid: task-1\ntitle: Add a health check\nstatus: To Do\nassignee: []\ncreated_date: '2026-12-01 10:00'\nlabels: []\ndependencies: []\n---\n\n## Description\n\nAdd it.\n",
    });
    await sh(repo, 'add', '-A');
    await sh(repo, 'commit', '-qm', 'backlog');
    const origin = join(dirname(repo), 'origin.git');
    await sh(dirname(repo), 'init', '--quiet', '--bare', origin);
    await sh(repo, 'remote', 'add', 'origin', origin);
    const ghLog = join(dirname(repo), 'gh-calls.jsonl');
    const env = { FAKE_GH_LOG: ghLog, PATH: `${FAKE_GH}${delimiter}${PATH_WITHOUT_GH}` };
    const run = await troupe(repo, ['watch', '--once', '--script', 'script.yaml'], env);
    expect([run.code, run.stderr]).toEqual([0, '']);
    const calls = readFileSync(ghLog, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as string[]);
    expect(calls).toHaveLength(1);
    const arg = (name: string) => calls[0]![calls[0]!.indexOf(name) + 1];
    expect(arg('--title')).toBe('task-1: Add a health check');
    expect(arg('--body')).toMatch(/^Issue: task\\-1\n/);
    expect(calls[0]).toContain('--draft');
    const file = readFileSync(join(repo, 'backlog', 'tasks', 'task-1 - Health.md'), 'utf8');
    expect(file).toContain('- Pull request: https://github.com/octo-org/octo-repo/pull/1');
    expect(file).toMatch(/^status: Done$/m);
    const again = await troupe(repo, ['watch', '--once', '--script', 'script.yaml'], env);
    expect([again.code, again.stderr]).toEqual([0, '']);
    expect(readFileSync(ghLog, 'utf8').trim().split('\n')).toHaveLength(1);
  });
});
