import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type LinearMock, startLinearMock } from '../../test/fixtures/linear-api/server.js';
import type { Tracker } from '../core/tracker.js';
import { trackerContract, trackerFailure } from './contract.js';
import { type LinearTrackerOptions, openLinearTracker } from './linear.js';

const SEED_STATES = { active: 'Todo', working: 'In Progress', done: 'Done' } as const;

trackerContract('linear', async (seed) => {
  const mock = await startLinearMock();
  const ids = new Map<string, string>();
  for (const issue of seed) {
    const created = mock.addIssue({
      title: issue.title,
      description: issue.description,
      state: SEED_STATES[issue.state],
      labels: issue.labels,
      priority: issue.priority ?? 0,
      assigneeId: issue.state === 'working' ? 'someone-else' : null,
      blockedBy: issue.blocked_by.map((key) => ids.get(key)!),
    });
    ids.set(issue.key, created.id);
  }
  const tracker = openLinearTracker(
    { projectSlug: mock.projectSlug, endpoint: mock.url },
    { env: { LINEAR_API_KEY: mock.apiKey } },
  );
  const issue = (id: string) => mock.issues.get(id)!;
  return {
    tracker,
    idOf: (key) => ids.get(key)!,
    states: { ...SEED_STATES },
    comments: async (id) => issue(id).comments.map((c) => c.body),
    state: async (id) => issue(id).state,
    claimedBy: async (id) => (issue(id).assigneeId ? [issue(id).assigneeId!] : []),
    close: () => mock.close(),
  };
});

describe('the Linear tracker', () => {
  let mock: LinearMock | null = null;
  afterEach(async () => {
    await mock?.close();
    mock = null;
  });

  async function open(
    options: Partial<LinearTrackerOptions> = {},
  ): Promise<{ mock: LinearMock; tracker: Tracker }> {
    mock = await startLinearMock();
    const tracker = openLinearTracker(
      { projectSlug: mock.projectSlug, endpoint: mock.url, ...options },
      { env: { LINEAR_API_KEY: mock.apiKey } },
    );
    return { mock, tracker };
  }

  const failure = trackerFailure;

  it('reads 500 active issues over 10 pages of 50 in one candidates() call', async () => {
    const { mock, tracker } = await open();
    for (let n = 1; n <= 500; n++)
      mock.addIssue({ title: `issue ${n}`, state: n % 2 ? 'Todo' : 'In Progress' });
    mock.addIssue({ title: 'finished', state: 'Done' });
    const issues = await tracker.candidates();
    expect(issues).toHaveLength(500);
    expect(issues[0]!.title).toBe('issue 1');
    expect(issues[499]!.title).toBe('issue 500');
    const polls = mock.requests.filter((r) => r.operation === 'TroupeLinearCandidates');
    expect(polls).toHaveLength(10);
    expect(polls.every((r) => r.variables.first === 50 && r.variables.relationFirst === 20)).toBe(true);
    expect(polls[0]!.variables).toMatchObject({
      projectSlug: mock.projectSlug,
      stateNames: ['Todo', 'In Progress'],
    });
  });

  it('sends the personal API key as the bare Authorization header, to the configured endpoint only', async () => {
    const { mock, tracker } = await open();
    await tracker.candidates();
    expect(mock.requests.at(-1)!.status).toBe(200);
    expect(() =>
      openLinearTracker(
        { projectSlug: 'abc', endpoint: 'http://linear.example.test/graphql' },
        { env: { LINEAR_API_KEY: 'k' } },
      ),
    ).toThrow(/must be https/);
    expect(() => openLinearTracker({ projectSlug: 'abc' }, { env: {} })).toThrow(/LINEAR_API_KEY is not set/);
  });

  it('maps priority, labels, blockers and sub-issues the way Symphony does', async () => {
    const { mock, tracker } = await open();
    const blocker = mock.addIssue({ title: 'blocker', state: 'In Review' });
    const parent = mock.addIssue({
      title: 'parent',
      priority: 0,
      labels: ['Backend', 'URGENT'],
      blockedBy: [blocker.id],
    });
    const child = mock.addIssue({ title: 'child', priority: 4, parentId: parent.id, state: 'In Progress' });
    const issues = await tracker.candidates();
    const byTitle = new Map(issues.map((i) => [i.title, i]));
    expect(byTitle.has('blocker')).toBe(false);
    expect(byTitle.get('parent')).toMatchObject({
      priority: null,
      labels: ['backend', 'urgent'],
      blocked_by: [
        { id: blocker.id, identifier: blocker.identifier, state: 'In Review' },
        { id: child.id, identifier: child.identifier, state: 'In Progress' },
      ],
    });
    expect(byTitle.get('child')).toMatchObject({ priority: 4, blocked_by: [] });
  });

  it('compares state names trimmed and lower-cased; a terminal state is never a candidate', async () => {
    const { mock, tracker } = await open({ activeStates: [' todo ', 'Done'], terminalStates: ['done'] });
    mock.addIssue({ title: 'to do', state: 'todo' });
    mock.addIssue({ title: 'finished', state: 'Done' });
    expect((await tracker.candidates()).map((i) => i.title)).toEqual(['to do']);
  });

  it('moves an issue to a state of its team by name, and names the states when there is none', async () => {
    const { mock, tracker } = await open();
    const issue = mock.addIssue({ title: 'x' });
    await tracker.moveTo(issue.id, 'in review');
    expect(issue.state).toBe('In Review');
    const error = await failure(tracker.moveTo(issue.id, 'Shipped'));
    expect(error.kind).toBe('invalid');
    expect(error.message).toContain('Backlog, Todo, In Progress');
  });

  it('will not take an issue assigned to someone else, nor release it from them', async () => {
    const { mock, tracker } = await open();
    const issue = mock.addIssue({ title: 'theirs', assigneeId: 'another-user' });
    expect((await failure(tracker.claim(issue.id, 'troupe'))).kind).toBe('invalid');
    await tracker.release(issue.id, 'troupe');
    expect(issue.assigneeId).toBe('another-user');
  });

  it("assignee: only that user's issues (me: the key's), over every page; claim and release leave the assignment alone", async () => {
    const { mock, tracker } = await open({ assignee: 'me' });
    for (let i = 0; i < 60; i++) mock.addIssue({ title: `mine ${i}`, assigneeId: mock.viewerId });
    mock.addIssue({ title: 'nobody' });
    const theirs = mock.addIssue({ title: 'theirs', assigneeId: 'user-2' });
    const mine = await tracker.candidates();
    expect(mine).toHaveLength(60);
    expect(new Set(mine.map((i) => i.title.split(' ')[0]))).toEqual(new Set(['mine']));
    const first = mine[0]!;
    await tracker.claim(first.id, 'troupe');
    await tracker.release(first.id, 'troupe');
    expect(mock.issues.get(first.id)!.assigneeId).toBe(mock.viewerId);
    expect(mock.requests.filter((r) => r.operation === 'TroupeLinearIssueUpdate')).toEqual([]);
    // given to someone else: out of reach, so the watcher stops its task (Symphony: not routable)
    mock.issues.get(first.id)!.assigneeId = 'user-3';
    const states = await tracker.states([first.id, mine[1]!.id]);
    expect([states.get(first.id), states.get(mine[1]!.id)]).toEqual([null, 'Todo']);

    const routed = openLinearTracker(
      { projectSlug: mock.projectSlug, endpoint: mock.url, assignee: 'user-2' },
      { env: { LINEAR_API_KEY: mock.apiKey } },
    );
    expect((await routed.candidates()).map((i) => i.id)).toEqual([theirs.id]);
    await routed.claim(theirs.id, 'troupe');
    // reassigned meanwhile: no longer troupe's to take
    expect((await failure(routed.claim(first.id, 'troupe'))).kind).toBe('invalid');
    expect(theirs.assigneeId).toBe('user-2');
  });

  it('posts the progress comment again when someone deleted it', async () => {
    const { mock, tracker } = await open();
    const issue = mock.addIssue({ title: 'x' });
    const first = await tracker.upsertComment(issue.id, 'one', null);
    issue.comments = [];
    const second = await tracker.upsertComment(issue.id, 'two', first);
    expect(second).not.toBe(first);
    expect(issue.comments.map((c) => c.body)).toEqual(['two']);
  });

  it('a 429 is rate_limited until X-RateLimit-Requests-Reset (epoch ms)', async () => {
    const { mock, tracker } = await open();
    const reset = Date.parse('2026-12-05T12:00:00Z');
    mock.failures.push({
      status: 429,
      headers: { 'X-RateLimit-Requests-Remaining': '0', 'X-RateLimit-Requests-Reset': String(reset) },
      fixture: 'error-ratelimited',
    });
    const error = await failure(tracker.candidates());
    expect(error.kind).toBe('rate_limited');
    expect(error.resetAt).toBe('2026-12-05T12:00:00.000Z');
  });

  it('a RATELIMITED error in a 400 answer is rate_limited too', async () => {
    const { mock, tracker } = await open();
    mock.failures.push({
      status: 400,
      headers: { 'X-RateLimit-Requests-Reset': String(Date.parse('2026-12-05T13:00:00Z')) },
      fixture: 'error-ratelimited',
    });
    const error = await failure(tracker.states([randomId()]));
    expect(error.kind).toBe('rate_limited');
    expect(error.resetAt).toBe('2026-12-05T13:00:00.000Z');
  });

  it('a key revoked mid-run is an auth error that never shows the key', async () => {
    const { mock, tracker } = await open();
    const issue = mock.addIssue({ title: 'x' });
    await tracker.candidates();
    const held = mock.apiKey;
    mock.apiKey = 'lin_api_rotated';
    const error = await failure(tracker.claim(issue.id, 'troupe'));
    expect(error.kind).toBe('auth');
    expect(error.message).toContain('LINEAR_API_KEY');
    expect(`${error.message} ${error.hint}`).not.toContain(held);
    // an authentication error in a 400 answer, as Linear also sends it
    mock.failures.push({ status: 400, fixture: 'error-authentication' });
    expect((await failure(tracker.candidates())).kind).toBe('auth');
  });

  it('5xx and a closed port are unreachable; other GraphQL errors are invalid with their message', async () => {
    const { mock: server, tracker } = await open();
    server.failures.push({ status: 502, body: '<html>bad gateway</html>' });
    expect((await failure(tracker.candidates())).kind).toBe('unreachable');
    server.failures.push({ status: 400, body: { errors: [{ message: 'Argument Validation Error' }] } });
    const invalid = await failure(tracker.candidates());
    expect(invalid.kind).toBe('invalid');
    expect(invalid.message).toContain('Argument Validation Error');
    const url = server.url;
    await server.close();
    const gone = openLinearTracker({ projectSlug: 'abc', endpoint: url }, { env: { LINEAR_API_KEY: 'k' } });
    expect((await failure(gone.candidates())).kind).toBe('unreachable');
    mock = null;
  });

  it('a server that never answers is unreachable after the timeout, not a hung poll', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    try {
      const { port } = silent.address() as AddressInfo;
      const tracker = openLinearTracker(
        { projectSlug: 'abc', endpoint: `http://127.0.0.1:${port}/graphql`, timeoutMs: 300 },
        { env: { LINEAR_API_KEY: 'k' } },
      );
      expect((await failure(tracker.candidates())).kind).toBe('unreachable');
    } finally {
      silent.closeAllConnections();
      await new Promise((done) => silent.close(done));
    }
  });

  it('a 404 without GraphQL errors (a wrong endpoint) is invalid', async () => {
    const { mock, tracker } = await open();
    mock.failures.push({ status: 404, body: 'Not Found' });
    const error = await failure(tracker.candidates());
    expect(error.kind).toBe('invalid');
    expect(error.hint).toContain('endpoint');
  });
});

function randomId() {
  return crypto.randomUUID();
}
