import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type GitHubMock, startGitHubMock } from './fixtures/github-api/server.js';
import { backlogTask as taskFile } from './support/backlog.js';
import { project, troupe } from './support/troupe.js';

/** `troupe watch` against a Backlog.md folder and the GitHub mock, through the built binary. */

const PIPELINE = `agents:
  - id: builder
    runtime: claude
    system_prompt: "Build: {{ input }}"
`;
const SCRIPT = 'agents:\n  builder:\n    - "Built it."\n';

function backlogTask(id: string, fields: { priority?: string; dependencies?: string[]; day?: number } = {}) {
  // issue text a hostile author wrote: it must reach the agent as text, never through a shell
  return taskFile(id, { ...fields, description: `Do ${id}. $(rm -rf ~) \`echo hostile\`` });
}

function backlogProject(tasks: Record<string, string>): string {
  return project({
    '.troupe/pipelines/default.yaml': PIPELINE,
    'script.yaml': SCRIPT,
    'backlog/config.yml': 'statuses: ["To Do", "In Progress", "Done"]\ndefault_status: "To Do"\n',
    ...Object.fromEntries(
      Object.entries(tasks).map(([id, text]) => [`backlog/tasks/${id} - Title.md`, text]),
    ),
  });
}

interface PollJson {
  start: Array<{ id: string; identifier: string; pipeline: string; task: string | null }>;
  skipped: Array<{ id: string; identifier: string; reason: string }>;
}

async function tasksOf(dir: string): Promise<Array<{ id: string; status: string; input: string }>> {
  const list = await troupe(dir, ['list', '--json']);
  return JSON.parse(list.stdout);
}

const statusOf = (dir: string, id: string) => {
  const file = readdirSync(join(dir, 'backlog', 'tasks')).find((f) => f.startsWith(`${id} `))!;
  return /^status: (.*)$/m.exec(readFileSync(join(dir, 'backlog', 'tasks', file), 'utf8'))![1];
};

describe('troupe watch on a backlog/ folder (no configuration)', { timeout: 90_000 }, () => {
  it('--once --dry-run lists what would start, in priority order, and why the others would not; it changes nothing', async () => {
    const dir = backlogProject({
      'task-1': backlogTask('task-1', { priority: 'low' }),
      'task-2': backlogTask('task-2', { priority: 'high', day: 2 }),
      'task-3': backlogTask('task-3', { dependencies: ['task-1'] }),
    });
    const run = await troupe(dir, ['watch', '--once', '--dry-run', '--json']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const poll = JSON.parse(run.stdout) as PollJson;
    expect(poll.start.map((s) => [s.identifier, s.pipeline, s.task])).toEqual([
      ['task-2', 'default', null],
      ['task-1', 'default', null],
    ]);
    expect(poll.skipped).toEqual([
      { id: 'task-3', identifier: 'task-3', reason: 'blocked by task-1 (To Do)' },
    ]);
    const human = await troupe(dir, ['watch', '--once', '--dry-run']);
    expect(human.stdout).toContain('skipped  task-3  blocked by task-1 (To Do)');
    expect(await tasksOf(dir)).toEqual([]);
    expect(statusOf(dir, 'task-1')).toBe('To Do');
  });

  it('two --once started at once run each issue exactly once; a third finds nothing new', async () => {
    const ids = ['task-1', 'task-2', 'task-3', 'task-4', 'task-5', 'task-6'];
    const dir = backlogProject(Object.fromEntries(ids.map((id) => [id, backlogTask(id)])));
    const [a, b] = await Promise.all([
      troupe(dir, ['watch', '--once', '--script', 'script.yaml', '--json']),
      troupe(dir, ['watch', '--once', '--script', 'script.yaml', '--json']),
    ]);
    expect([a.code, b.code]).toEqual([0, 0]);
    const started = [a, b].flatMap((r) => (JSON.parse(r.stdout) as PollJson).start.map((s) => s.identifier));
    expect(started.sort()).toEqual(ids);
    const tasks = await tasksOf(dir);
    expect(tasks).toHaveLength(6);
    expect(tasks.every((t) => t.status === 'completed')).toBe(true);
    // each issue's task is its own, and its text reached the task as data
    expect(tasks.map((t) => /\((task-\d)\)/.exec(t.input)![1]).sort()).toEqual(ids);
    for (const id of ids) expect(statusOf(dir, id)).toBe('Done');
    const again = await troupe(dir, ['watch', '--once', '--script', 'script.yaml', '--json']);
    expect(JSON.parse(again.stdout)).toEqual({ start: [], skipped: [] });
    expect(await tasksOf(dir)).toHaveLength(6);
  });

  it('without a tracker nor a backlog, says what to add (usage error)', async () => {
    const dir = project({ '.troupe/pipelines/default.yaml': PIPELINE });
    const run = await troupe(dir, ['watch', '--once', '--dry-run']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/no tracker to watch/);
    expect(run.stderr.split('\n').filter((l) => l.includes('    at '))).toEqual([]);
  });
});

describe('troupe watch on GitHub Issues (the loopback mock)', { timeout: 90_000 }, () => {
  let mock: GitHubMock;
  afterEach(async () => mock?.close());

  function githubProject(extra = ''): string {
    return project({
      '.troupe/pipelines/default.yaml': PIPELINE,
      '.troupe/pipelines/fix.yaml': PIPELINE,
      'script.yaml': SCRIPT,
      '.troupe/config.yaml': `tracker:
  kind: github
  owner: ${mock.owner}
  repo: ${mock.repo}
  api_url: ${mock.url}
  pipelines: {bug: fix}
  concurrency: {max: 2}
${extra}`,
    });
  }

  it('--once --dry-run: by label, by priority, blockers and the concurrency limit', async () => {
    mock = await startGitHubMock();
    mock.addIssue({ title: 'one', labels: ['bug'] });
    mock.addIssue({ title: 'two', labels: ['priority: high'] });
    mock.addIssue({ title: 'three', blocked_by: [1] });
    mock.addIssue({ title: 'four' });
    const dir = githubProject();
    const run = await troupe(dir, ['watch', '--once', '--dry-run', '--json'], { GH_TOKEN: mock.token });
    expect(run.stderr).toBe('');
    const poll = JSON.parse(run.stdout) as PollJson;
    expect(poll.start.map((s) => [s.identifier, s.pipeline])).toEqual([
      ['#2', 'default'],
      ['#1', 'fix'],
    ]);
    expect(poll.skipped).toEqual([
      { id: '3', identifier: '#3', reason: 'blocked by #1 (open)' },
      { id: '4', identifier: '#4', reason: 'concurrency: 2 of 2 running' },
    ]);
  });

  it('--once runs each issue once, labels it taken, closes it at the end with its progress comment', async () => {
    mock = await startGitHubMock();
    mock.addIssue({ title: 'one' });
    mock.addIssue({ title: 'two' });
    const dir = githubProject();
    const [a, b] = await Promise.all([
      troupe(dir, ['watch', '--once', '--script', 'script.yaml', '--json'], { GH_TOKEN: mock.token }),
      troupe(dir, ['watch', '--once', '--script', 'script.yaml', '--json'], { GH_TOKEN: mock.token }),
    ]);
    expect([a.code, b.code, a.stderr, b.stderr]).toEqual([0, 0, '', '']);
    expect(await tasksOf(dir)).toHaveLength(2);
    for (const issue of mock.issues.values()) {
      expect(issue.state).toBe('closed');
      expect(issue.labels).toContain('troupe');
      expect(issue.comments).toHaveLength(1);
      expect(issue.comments[0]!.body).toMatch(
        /^<!-- troupe:progress T-[0-9A-F]{6} -->\n\*\*troupe\*\* task `T-[0-9A-F]{6}`: \*\*completed\*\*/,
      );
    }
  });

  it('a bad token is one line and exit 1, no stack', async () => {
    mock = await startGitHubMock();
    mock.addIssue({ title: 'one' });
    const dir = githubProject();
    const run = await troupe(dir, ['watch', '--once', '--dry-run'], { GH_TOKEN: 'ghp_wrong' });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')[0]).toMatch(/github/i);
    expect(run.stderr).not.toMatch(/ {4}at /);
  });
});

describe('troupe watch and a gate that waits for a person', { timeout: 90_000 }, () => {
  it('says so in the progress note; once approved, the next poll carries it to the hand-off', async () => {
    const dir = project({
      '.troupe/pipelines/default.yaml': `agents:
  - id: builder
    runtime: claude
    gate: { type: human }
    system_prompt: "Build: {{ input }}"
`,
      'script.yaml': SCRIPT,
      'backlog/config.yml': 'statuses: ["To Do", "In Progress", "Done"]\n',
      'backlog/tasks/task-1 - Title.md': backlogTask('task-1'),
    });
    const first = await troupe(dir, ['watch', '--once', '--script', 'script.yaml']);
    expect(first.code).toBe(0);
    const [task] = await tasksOf(dir);
    expect(task!.status).toBe('awaiting_gate');
    const note = () => readFileSync(join(dir, 'backlog', 'tasks', 'task-1 - Title.md'), 'utf8');
    expect(note()).toContain(`Waiting for approval of builder's output: \`troupe approve ${task!.id}\``);
    expect(statusOf(dir, 'task-1')).toBe('In Progress');
    expect((await troupe(dir, ['approve', task!.id, '-r', 'fine'])).code).toBe(0);
    await troupe(dir, ['watch', '--once', '--script', 'script.yaml']);
    expect((await tasksOf(dir)).map((t) => [t.id, t.status])).toEqual([[task!.id, 'completed']]);
    expect(statusOf(dir, 'task-1')).toBe('Done');
    expect(note()).toContain(`task \`${task!.id}\`: **completed**`);
  });
});
