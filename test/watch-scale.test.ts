import { afterEach, describe, expect, it } from 'vitest';
import { type GitHubMock, startGitHubMock } from './fixtures/github-api/server.js';
import { project, troupe } from './support/troupe.js';

/** `troupe watch` on a tracker with 500 open issues, through the built binary and the GitHub mock. */

const PIPELINE = `agents:
  - id: builder
    runtime: claude
    system_prompt: "Build: {{ input }}"
`;

interface PollJson {
  start: Array<{ id: string; identifier: string }>;
  skipped: Array<{ id: string; identifier: string; reason: string }>;
}

describe('troupe watch with 500 issues in one poll', { timeout: 120_000 }, () => {
  let mock: GitHubMock;
  afterEach(async () => mock?.close());

  function manyIssues(): void {
    for (let n = 1; n <= 500; n++) {
      mock.addIssue({
        title: `issue ${n}`,
        // every tenth is blocked by the one before it; 25, 75, 125… are urgent
        blocked_by: n % 10 === 0 ? [n - 1] : [],
        labels: n % 50 === 25 ? ['priority: urgent'] : [],
      });
    }
  }

  function githubProject(): string {
    return project({
      '.troupe/pipelines/default.yaml': PIPELINE,
      'script.yaml': 'agents:\n  builder:\n    - "Built it."\n',
      '.troupe/config.yaml': `tracker:
  kind: github
  owner: ${mock.owner}
  repo: ${mock.repo}
  api_url: ${mock.url}
  concurrency: {max: 3}
`,
    });
  }

  it('reads them in pages of 100, asks for blockers only where GitHub counts some, and accounts for every issue', async () => {
    mock = await startGitHubMock();
    manyIssues();
    const dir = githubProject();
    const run = await troupe(dir, ['watch', '--once', '--dry-run', '--json'], { GH_TOKEN: mock.token });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const poll = JSON.parse(run.stdout) as PollJson;
    // the urgent ones first, oldest first
    expect(poll.start.map((s) => s.identifier)).toEqual(['#25', '#75', '#125']);
    expect(poll.start.length + poll.skipped.length).toBe(500);
    expect(new Set([...poll.start, ...poll.skipped].map((i) => i.id)).size).toBe(500);
    const blocked = poll.skipped.filter((s) => s.reason.startsWith('blocked by'));
    expect(blocked).toHaveLength(50);
    expect(blocked[0]).toEqual({ id: '10', identifier: '#10', reason: 'blocked by #9 (open)' });
    expect(poll.skipped.filter((s) => s.reason === 'concurrency: 3 of 3 running')).toHaveLength(447);

    const lists = mock.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/issues'));
    expect(lists.map((r) => r.query.get('per_page'))).toEqual(['100', '100', '100', '100', '100']);
    const dependencyReads = mock.requests.filter((r) => r.path.endsWith('/dependencies/blocked_by'));
    expect(dependencyReads).toHaveLength(50);
    expect(mock.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('starts exactly the concurrency limit, claims only those, and the next poll takes the next ones', async () => {
    mock = await startGitHubMock();
    manyIssues();
    const dir = githubProject();
    const first = await troupe(dir, ['watch', '--once', '--script', 'script.yaml'], { GH_TOKEN: mock.token });
    expect([first.code, first.stderr]).toEqual([0, '']);
    const taken = () =>
      [...mock.issues.values()].filter((i) => i.labels.includes('troupe')).map((i) => i.number);
    expect(taken()).toEqual([25, 75, 125]);
    expect([...mock.issues.values()].filter((i) => i.state === 'closed').map((i) => i.number)).toEqual([
      25, 75, 125,
    ]);
    const second = await troupe(dir, ['watch', '--once', '--script', 'script.yaml'], {
      GH_TOKEN: mock.token,
    });
    expect([second.code, second.stderr]).toEqual([0, '']);
    expect(taken()).toEqual([25, 75, 125, 175, 225, 275]);
    const list = JSON.parse((await troupe(dir, ['list', '--json'])).stdout) as unknown[];
    expect(list).toHaveLength(6);
  });
});
