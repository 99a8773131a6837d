import { describe, expect, it } from 'vitest';
import type { TrackerIssue } from '../core/tracker.js';
import { type HeldIssue, type IssuePolicy, retryDelayMs, selectIssues } from './issue-queue.js';

const now = new Date('2026-12-05T12:00:00.000Z');

function issue(id: string, fields: Partial<TrackerIssue> = {}): TrackerIssue {
  return {
    id,
    identifier: `#${id}`,
    title: `issue ${id}`,
    description: '',
    priority: null,
    state: 'open',
    labels: [],
    blocked_by: [],
    url: null,
    created_at: '2026-12-01T00:00:00Z',
    updated_at: null,
    ...fields,
  };
}

function held(issueId: string, fields: Partial<HeldIssue> = {}): HeldIssue {
  return {
    issueId,
    taskId: `T-${issueId}`,
    taskStatus: 'running',
    state: 'open',
    attempts: 0,
    retryAt: null,
    ...fields,
  };
}

const policy: IssuePolicy = {
  activeStates: ['Open', 'In Progress'],
  terminalStates: ['Closed'],
  pipelines: { bug: 'fix' },
  defaultPipeline: 'build',
  concurrency: { max: 10, perState: {} },
};

const ids = (s: ReturnType<typeof selectIssues>) => s.start.map((x) => x.issue.id);
const reasons = (s: ReturnType<typeof selectIssues>) =>
  Object.fromEntries(s.skipped.map((x) => [x.issue.id, x.reason]));

describe('selectIssues', () => {
  it('orders by priority (1 first, none last), then the oldest, then the identifier', () => {
    const s = selectIssues(
      [
        issue('1', { priority: null }),
        issue('2', { priority: 3, created_at: '2026-12-02T00:00:00Z' }),
        issue('3', { priority: 3, created_at: '2026-12-01T00:00:00Z' }),
        issue('4', { priority: 1 }),
        issue('6', { priority: 3, created_at: '2026-12-01T00:00:00Z', identifier: '#0' }),
      ],
      [],
      policy,
      now,
    );
    expect(ids(s)).toEqual(['4', '6', '3', '2', '1']);
  });

  it('picks the pipeline by label, else the default; none at all is a reason', () => {
    const s = selectIssues([issue('1', { labels: ['bug'] }), issue('2')], [], policy, now);
    expect(s.start.map((x) => x.pipeline)).toEqual(['fix', 'build']);
    const none = selectIssues(
      [issue('3', { labels: ['ui', 'docs'] })],
      [],
      { ...policy, defaultPipeline: null },
      now,
    );
    expect(reasons(none)).toEqual({ '3': 'no pipeline for labels (ui, docs)' });
  });

  it('waits for blockers that are not in a terminal state', () => {
    const s = selectIssues(
      [
        issue('1', { blocked_by: [{ id: '3', identifier: '#3', state: 'open' }] }),
        issue('2', { blocked_by: [{ id: '4', identifier: '#4', state: ' closed ' }] }),
        issue('5', { blocked_by: [{ id: '9', identifier: '#9', state: null }] }),
      ],
      [],
      policy,
      now,
    );
    expect(ids(s)).toEqual(['2']);
    expect(reasons(s)).toEqual({ '1': 'blocked by #3 (open)', '5': 'blocked by #9 (unknown)' });
  });

  it('skips claimed issues, naming the task; a gave-up one says so', () => {
    const s = selectIssues(
      [issue('1'), issue('2'), issue('3')],
      [
        held('1'),
        held('2', { taskStatus: 'failed', attempts: 3 }),
        held('3', { taskId: null, taskStatus: null }),
      ],
      policy,
      now,
    );
    expect(ids(s)).toEqual([]);
    expect(reasons(s)).toEqual({
      '1': 'claimed by task T-1 (running)',
      '2': 'gave up after 3 tries (task T-2)',
      '3': 'claimed: its task is being started',
    });
  });

  it('bounds concurrency globally and per state, counting running claims', () => {
    const s = selectIssues(
      [issue('1'), issue('2'), issue('3', { state: 'In Progress' }), issue('4', { state: 'In Progress' })],
      [held('9', { state: 'In Progress' })],
      { ...policy, concurrency: { max: 3, perState: { 'in progress': 1 } } },
      now,
    );
    expect(ids(s)).toEqual(['1', '2']);
    expect(reasons(s)).toEqual({
      '3': 'concurrency: 3 of 3 running',
      '4': 'concurrency: 3 of 3 running',
    });
    const perState = selectIssues(
      [issue('3', { state: 'In Progress' }), issue('4', { state: 'In Progress' })],
      [held('9', { state: 'In Progress' })],
      { ...policy, concurrency: { max: 3, perState: { 'In Progress': 2 } } },
      now,
    );
    expect(ids(perState)).toEqual(['3']);
    expect(reasons(perState)).toEqual({ '4': 'concurrency: 2 of 2 in "In Progress"' });
  });

  it("an issue's next turn to come (a completed task, its continuation time set) holds its slot", () => {
    const next = held('9', { taskStatus: 'completed', retryAt: '2026-12-05T12:00:01.000Z' });
    const s = selectIssues(
      [issue('1'), issue('9')],
      [next],
      { ...policy, concurrency: { max: 1, perState: {} } },
      now,
    );
    expect(ids(s)).toEqual([]);
    expect(reasons(s)).toEqual({ '1': 'concurrency: 1 of 1 running', '9': 'next turn after task T-9' });
  });

  it('retries a failed task once its time has come; before, it says how long', () => {
    const waiting = held('1', { taskStatus: 'failed', attempts: 1, retryAt: '2026-12-05T12:00:40.000Z' });
    expect(reasons(selectIssues([issue('1')], [waiting], policy, now))).toEqual({
      '1': 'retry in 40 s (task T-1, try 2)',
    });
    const due = selectIssues([issue('1')], [waiting], policy, new Date('2026-12-05T12:00:41Z'));
    expect(due.start).toMatchObject([{ retryOf: { taskId: 'T-1', attempt: 2 } }]);
  });

  it('does not take an issue out of the active states', () => {
    const s = selectIssues(
      [issue('1', { state: 'Closed' }), issue('2', { state: 'Review' })],
      [],
      policy,
      now,
    );
    expect(reasons(s)).toEqual({ '1': 'state "Closed" is not active', '2': 'state "Review" is not active' });
  });

  it("requires WORKFLOW.md's required_labels, case and spaces aside", () => {
    const s = selectIssues(
      [issue('1', { labels: ['ready for agent'] }), issue('2', { labels: ['bug'] })],
      [],
      { ...policy, requiredLabels: ['Ready For Agent'] },
      now,
    );
    expect(ids(s)).toEqual(['1']);
    expect(reasons(s)).toEqual({ '2': 'no label "Ready For Agent"' });
  });

  it('backs off as Symphony does: 10 s · 2^(attempt−1), capped', () => {
    expect([1, 2, 3, 6, 10].map((a) => retryDelayMs(a, 10_000, 300_000))).toEqual([
      10_000, 20_000, 40_000, 300_000, 300_000,
    ]);
  });
});
