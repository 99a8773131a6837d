import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type GitHubMock,
  type GitHubMockOptions,
  startGitHubMock,
} from '../../test/fixtures/github-api/server.js';
import type { Tracker } from '../core/tracker.js';
import { trackerContract, trackerFailure } from './contract.js';
import { type GitHubTrackerOptions, openGitHubTracker } from './github.js';

trackerContract('github', async (seed) => {
  const mock = await startGitHubMock();
  const numbers = new Map<string, number>();
  for (const issue of seed) {
    const created = mock.addIssue({
      title: issue.title,
      body: issue.description,
      state: issue.state === 'done' ? 'closed' : 'open',
      state_reason: issue.state === 'done' ? 'completed' : null,
      labels: issue.labels,
      assignees: issue.state === 'working' ? ['someone'] : [],
      blocked_by: issue.blocked_by.map((key) => numbers.get(key)!),
    });
    numbers.set(issue.key, created.number);
  }
  const tracker = await openGitHubTracker(
    { owner: mock.owner, repo: mock.repo, apiUrl: mock.url },
    { env: { GH_TOKEN: mock.token } },
  );
  const issue = (id: string) => mock.issues.get(Number(id))!;
  return {
    tracker,
    idOf: (key) => String(numbers.get(key)),
    states: { active: 'open', working: 'open', done: 'closed' },
    comments: async (id) => issue(id).comments.map((c) => c.body),
    state: async (id) => issue(id).state,
    claimedBy: async (id) => issue(id).labels.filter((l) => l === 'troupe'),
    close: () => mock.close(),
  };
});

describe('the GitHub Issues tracker', () => {
  let mock: GitHubMock | null = null;
  const scratch: string[] = [];
  afterEach(async () => {
    await mock?.close();
    mock = null;
    for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function open(
    mockOptions: GitHubMockOptions = {},
    options: Partial<GitHubTrackerOptions> = {},
  ): Promise<{ mock: GitHubMock; tracker: Tracker }> {
    mock = await startGitHubMock(mockOptions);
    const tracker = await openGitHubTracker(
      { owner: mock.owner, repo: mock.repo, apiUrl: mock.url, ...options },
      { env: { GITHUB_TOKEN: mock.token } },
    );
    return { mock, tracker };
  }

  const failure = trackerFailure;

  it('reads 500 open issues over 5 pages of 100 in one poll', async () => {
    const { mock, tracker } = await open();
    for (let n = 1; n <= 500; n++) mock.addIssue({ title: `issue ${n}` });
    const issues = await tracker.candidates();
    expect(issues).toHaveLength(500);
    expect(new Set(issues.map((i) => i.id)).size).toBe(500);
    const lists = mock.requests.filter((r) => r.path === `/repos/${mock.owner}/${mock.repo}/issues`);
    expect(lists.map((r) => [r.query.get('per_page'), r.query.get('page') ?? '1'])).toEqual([
      ['100', '1'],
      ['100', '2'],
      ['100', '3'],
      ['100', '4'],
      ['100', '5'],
    ]);
    // no per-issue call: none of them has a dependency
    expect(mock.requests).toHaveLength(5);
  });

  it('polls again with conditional requests: an unchanged page is a 304, a changed one is read anew', async () => {
    const { mock, tracker } = await open();
    for (let n = 1; n <= 150; n++) mock.addIssue({ title: `issue ${n}` });
    const first = await tracker.candidates();
    mock.requests.length = 0;
    expect(await tracker.candidates()).toEqual(first);
    expect(mock.requests.map((r) => r.status)).toEqual([304, 304]);
    mock.issues.get(150)!.title = 'renamed';
    mock.requests.length = 0;
    const third = await tracker.candidates();
    expect(mock.requests.map((r) => r.status)).toEqual([304, 200]);
    expect(third.at(-1)!.title).toBe('renamed');
  });

  it('skips pull requests, which the issues API lists too', async () => {
    const { mock, tracker } = await open();
    mock.addIssue({ title: 'a real issue' });
    mock.addIssue({ title: 'a pull request', pull_request: true });
    expect((await tracker.candidates()).map((i) => i.title)).toEqual(['a real issue']);
  });

  it('maps an issue: identifier, url, lower-cased labels, priority from a label, times', async () => {
    const { mock, tracker } = await open();
    mock.addIssue({ title: 'Fix login', body: 'It fails.', labels: ['Bug', 'Priority: 2', 'p3'] });
    const [issue] = await tracker.candidates();
    expect(issue).toMatchObject({
      id: '1',
      identifier: '#1',
      title: 'Fix login',
      description: 'It fails.',
      labels: ['bug', 'priority: 2', 'p3'],
      priority: 2,
      state: 'open',
      url: `http://127.0.0.1:${new URL(mock.url).port}/${mock.owner}/${mock.repo}/issues/1`,
      blocked_by: [],
    });
    expect(issue!.created_at).toMatch(/^2026-/);
  });

  it('selects by every configured label, a milestone by title and an assignee', async () => {
    const { mock, tracker } = await open(
      {},
      { labels: ['agent', 'Backend'], milestone: 'v2', assignee: 'ada' },
    );
    mock.milestones.push(
      { number: 1, title: 'v1', state: 'open' },
      { number: 2, title: 'v2', state: 'open' },
    );
    const match = { labels: ['agent', 'backend'], milestone: 2, assignees: ['ada'] };
    mock.addIssue({ title: 'all of it', ...match });
    mock.addIssue({ title: 'one label', ...match, labels: ['agent'] });
    mock.addIssue({ title: 'other milestone', ...match, milestone: 1 });
    mock.addIssue({ title: 'someone else', ...match, assignees: ['bob'] });
    expect((await tracker.candidates()).map((i) => i.title)).toEqual(['all of it']);
    const list = mock.requests.find((r) => r.path.endsWith('/issues'))!;
    expect(Object.fromEntries(list.query)).toMatchObject({
      labels: 'agent,Backend',
      milestone: '2',
      assignee: 'ada',
    });
  });

  it('reads blockers from the issue dependencies API, across repositories too, and from the body without it', async () => {
    const { mock, tracker } = await open();
    const blocker = mock.addIssue({ title: 'first', state: 'closed' });
    mock.addIssue({ title: 'second', blocked_by: [blocker.number] });
    const [second] = await tracker.candidates();
    expect(second!.blocked_by).toEqual([{ id: '1', identifier: '#1', state: 'closed' }]);
    await mock.close();

    const older = await open({ dependencies: false });
    older.mock.addIssue({ title: 'first' });
    older.mock.addIssue({ title: 'second', body: 'Blocked by #1\nDepends on: #7, #1' });
    const byTitle = new Map((await older.tracker.candidates()).map((i) => [i.title, i]));
    expect(byTitle.get('second')!.blocked_by).toEqual([
      { id: '1', identifier: '#1', state: 'open' },
      { id: '7', identifier: '#7', state: null },
    ]);
  });

  it('hands off by a label when one is configured: the issue leaves the candidates, its state is the label', async () => {
    const { mock, tracker } = await open({}, { handoffLabel: 'Ready for review' });
    mock.addIssue({ title: 'done by troupe' });
    await tracker.moveTo('1', 'ready for review');
    expect(mock.issues.get(1)!.state).toBe('open');
    expect(mock.issues.get(1)!.labels).toEqual(['Ready for review']);
    expect(await tracker.candidates()).toEqual([]);
    expect((await tracker.states(['1'])).get('1')).toBe('Ready for review');
    const refused = await failure(tracker.moveTo('1', 'In Progress'));
    expect(refused.kind).toBe('invalid');
    expect(refused.message).toContain('open, closed, Ready for review');
  });

  it('closes as completed and reopens', async () => {
    const { mock, tracker } = await open();
    mock.addIssue({ title: 'x' });
    await tracker.moveTo('1', 'closed');
    expect(mock.issues.get(1)).toMatchObject({ state: 'closed', state_reason: 'completed' });
    await tracker.moveTo('1', 'open');
    expect(mock.issues.get(1)!.state).toBe('open');
  });

  it('posts the progress comment again when someone deleted it', async () => {
    const { mock, tracker } = await open();
    mock.addIssue({ title: 'x' });
    const first = await tracker.upsertComment('1', 'troupe: planning', null);
    mock.issues.get(1)!.comments = [];
    const second = await tracker.upsertComment('1', 'troupe: building', first);
    expect(second).not.toBe(first);
    expect(mock.issues.get(1)!.comments.map((c) => c.body)).toEqual(['troupe: building']);
  });

  it('a 403 rate limit with its reset header is rate_limited until that time', async () => {
    const { mock, tracker } = await open();
    const reset = Math.floor(Date.now() / 1000) + 1800;
    mock.failures.push({
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
      body: JSON.parse('{"message":"API rate limit exceeded for user ID 1."}'),
    });
    const error = await failure(tracker.candidates());
    expect(error.kind).toBe('rate_limited');
    expect(error.resetAt).toBe(new Date(reset * 1000).toISOString());
    expect(error.message).not.toContain('\n');
  });

  it('a 429 with retry-after is rate_limited that many seconds from now', async () => {
    const { mock, tracker } = await open();
    mock.failures.push({ status: 429, headers: { 'retry-after': '120' }, body: { message: 'slow down' } });
    const before = Date.now();
    const error = await failure(tracker.states(['1']));
    expect(error.kind).toBe('rate_limited');
    const at = Date.parse(error.resetAt!);
    expect(at).toBeGreaterThanOrEqual(before + 119_000);
    expect(at).toBeLessThanOrEqual(Date.now() + 121_000);
  });

  it('a token revoked mid-run is an auth error that names where the token came from, never the token', async () => {
    const { mock, tracker } = await open();
    mock.addIssue({ title: 'x' });
    const token = mock.token;
    expect(await tracker.candidates()).toHaveLength(1);
    mock.token = 'a-new-token';
    const error = await failure(tracker.candidates());
    expect(error.kind).toBe('auth');
    expect(error.message).toContain('GITHUB_TOKEN');
    expect(error.message).toContain('Bad credentials');
    expect(`${error.message} ${error.hint}`).not.toContain(token);
    expect(error.message).not.toMatch(/\n|\bat .*\.js:\d+/);
    expect(error.cause).toBeUndefined();
  });

  it('a token echoed in an answer is blanked', async () => {
    const { mock, tracker } = await open();
    mock.failures.push({ status: 422, body: { message: `Validation Failed for ${mock.token}` } });
    const error = await failure(tracker.claim('1', 'troupe'));
    expect(error.kind).toBe('invalid');
    expect(error.message).toContain('[token]');
    expect(error.message).not.toContain(mock.token);
  });

  it('a 5xx and a closed port are unreachable; a missing issue is not_found, and null among states', async () => {
    const { mock, tracker } = await open();
    mock.addIssue({ title: 'x' });
    mock.failures.push({ status: 502, body: { message: 'Server Error' } });
    expect((await failure(tracker.candidates())).kind).toBe('unreachable');
    expect((await failure(tracker.moveTo('99', 'closed'))).kind).toBe('not_found');
    const states = await tracker.states(['1', '99', 'not-a-number']);
    expect(Object.fromEntries(states)).toEqual({ '1': 'open', '99': null, 'not-a-number': null });
    await mock.close();
    const error = await failure(tracker.candidates());
    expect(error.kind).toBe('unreachable');
    expect(error.message).not.toContain('\n');
  });

  it('a server that never answers is unreachable after the timeout, not a hung poll', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    try {
      const tracker = await openGitHubTracker(
        {
          owner: 'o',
          repo: 'r',
          apiUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
          timeoutMs: 300,
        },
        { env: { GH_TOKEN: 't' } },
      );
      const started = Date.now();
      expect((await failure(tracker.candidates())).kind).toBe('unreachable');
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('uses a GitHub Enterprise Server base URL for every call, pages included', async () => {
    const { mock, tracker } = await open({ prefix: '/api/v3' });
    for (let n = 1; n <= 150; n++) mock.addIssue({ title: `issue ${n}` });
    expect(await tracker.candidates()).toHaveLength(150);
    await tracker.claim('1', 'troupe');
    expect(mock.requests.length).toBe(3);
    expect(mock.requests.every((r) => r.underPrefix)).toBe(true);
    expect(tracker.source).toBe(`github:127.0.0.1:${new URL(mock.url).port}/${mock.owner}/${mock.repo}`);
  });

  it('refuses an http API URL off loopback and a malformed repository', async () => {
    const env = { GH_TOKEN: 't' };
    const bad = [
      { owner: 'o', repo: 'r', apiUrl: 'http://ghe.example/api/v3' },
      { owner: 'o/x', repo: 'r' },
      { owner: 'o', repo: '..' },
    ];
    for (const options of bad)
      expect((await failure(openGitHubTracker(options, { env }))).kind).toBe('invalid');
  });

  describe('the token', () => {
    function fakeGh(script: string): string {
      const dir = mkdtempSync(join(tmpdir(), 'troupe-gh-'));
      scratch.push(dir);
      const path = join(dir, 'gh');
      writeFileSync(path, `#!/bin/sh\n${script}\n`);
      chmodSync(path, 0o755);
      return path;
    }

    it('prefers GH_TOKEN over GITHUB_TOKEN', async () => {
      mock = await startGitHubMock();
      mock.addIssue({ title: 'x' });
      const tracker = await openGitHubTracker(
        { owner: mock.owner, repo: mock.repo, apiUrl: mock.url },
        { env: { GH_TOKEN: mock.token, GITHUB_TOKEN: 'wrong' } },
      );
      expect(await tracker.candidates()).toHaveLength(1);
    });

    it('asks `gh auth token` for the API host when no variable is set', async () => {
      mock = await startGitHubMock({ prefix: '/api/v3' });
      mock.addIssue({ title: 'x' });
      const host = new URL(mock.url).host;
      const gh = fakeGh(`[ "$*" = "auth token --hostname ${host}" ] && echo ${mock.token}`);
      const tracker = await openGitHubTracker(
        { owner: mock.owner, repo: mock.repo, apiUrl: mock.url },
        { env: {}, gh },
      );
      expect(await tracker.candidates()).toHaveLength(1);
    });

    it('no variable and no gh: one auth line saying what was read and how to set one', async () => {
      const options = { owner: 'o', repo: 'r' };
      for (const gh of [join(tmpdir(), 'no-such-gh-here'), fakeGh('echo "not logged in" >&2; exit 1')]) {
        const error = await failure(openGitHubTracker(options, { env: {}, gh }));
        expect(error.kind).toBe('auth');
        expect(error.message).toMatch(/GH_TOKEN.*GITHUB_TOKEN.*gh auth token.*set GH_TOKEN/);
        expect(error.message).not.toContain('\n');
      }
    });
  });
});
