import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { NotFoundError } from '../core/errors.js';
import { currentHolder, type EventStore, type LeaseHolder } from '../core/event-store.js';
import { TASK_CREATED } from '../engine/test-pipelines.js';

/** What every event store must do: SQLite and the in-memory store run it; PostgreSQL will run the same suite. */
export function storeContract(name: string, open: () => EventStore) {
  const created = TASK_CREATED;

  describe(`${name} event store contract`, () => {
    let store: EventStore;
    afterEach(() => store?.close());

    it('creates a task with a fresh T-XXXXXX id and its first event', () => {
      store = open();
      const first = store.createTask(created);
      const second = store.createTask(created);
      expect(first.taskId).toMatch(/^T-[0-9A-F]{6}$/);
      expect(second.taskId).not.toBe(first.taskId);
      expect(store.task(first.taskId)).toMatchObject({
        id: first.taskId,
        status: 'pending',
        pipeline: 'p',
        input: 'do it',
      });
    });

    it('appends in order, with rising global sequence numbers (consecutive within an append), and reads back from any point', () => {
      store = open();
      const { taskId } = store.createTask(created);
      const stored = store.append(
        taskId,
        [
          { type: 'stage_started', stage: 1, activation: 'a1', agent: 'a', input: 'x', attempt: 1 },
          { type: 'stage_output', stage: 1, text: 'hel' },
        ],
        { status: 'running' },
      );
      expect(stored[1]!.seq).toBe(stored[0]!.seq + 1);
      expect([...store.events(taskId)].map((e) => e.type)).toEqual([
        'task_created',
        'stage_started',
        'stage_output',
      ]);
      expect([...store.events(taskId, stored[0]!.seq)].map((e) => e.type)).toEqual(['stage_output']);
      expect(store.task(taskId)).toMatchObject({ status: 'running', currentAgent: 'a' });
      expect(store.eventsSince(0, 100).filter((e) => e.taskId === taskId)).toHaveLength(3);
    });

    it('keeps a large append whole and in order (70 events, each read back as written)', () => {
      store = open();
      const { taskId } = store.createTask(created);
      const events = Array.from({ length: 70 }, (_, i) => ({
        type: 'stage_output' as const,
        stage: 1,
        text: `part ${i}`,
      }));
      const stored = store.append(taskId, events, { status: 'running' });
      expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => stored[0]!.seq + i));
      const read = [...store.events(taskId, stored[0]!.seq - 1)];
      expect(read.map((e) => [e.seq, e.type === 'stage_output' ? e.text : ''])).toEqual(
        events.map((e, i) => [stored[0]!.seq + i, e.text]),
      );
    });

    it('reads events of some types across tasks, optionally only from tasks that have another type', () => {
      store = open();
      const a = store.createTask(created).taskId;
      const b = store.createTask(created).taskId;
      const started = (stage: number) =>
        ({ type: 'stage_started', stage, activation: 'a1', agent: 'a', input: 'x', attempt: 1 }) as const;
      store.append(a, [started(1), { type: 'budget_warning', used: 8, limit: 10, unit: 'tokens' }], {
        status: 'running',
      });
      store.append(b, [started(1), started(2)], { status: 'running' });
      const all = [...store.eventsOfTypes(['stage_started'])].filter((e) => e.taskId === a || e.taskId === b);
      expect(all.map((e) => [e.taskId, e.type])).toEqual([
        [a, 'stage_started'],
        [b, 'stage_started'],
        [b, 'stage_started'],
      ]);
      const ofA = [...store.eventsOfTypes(['stage_started', 'budget_warning'], 'budget_warning')];
      expect(ofA.map((e) => [e.taskId, e.type])).toEqual([
        [a, 'stage_started'],
        [a, 'budget_warning'],
      ]);
    });

    it('writes nothing after a task has ended', () => {
      store = open();
      const { taskId } = store.createTask(created);
      store.append(taskId, [{ type: 'task_cancelled', reason: 'stop' }], { status: 'cancelled' });
      expect(() => store.append(taskId, [{ type: 'task_completed' }], { status: 'completed' })).toThrow(
        /cancelled/,
      );
      expect([...store.events(taskId)].map((e) => e.type)).toEqual(['task_created', 'task_cancelled']);
    });

    it('summarises a task with the tracker issue its task_created records, and null for one without', () => {
      store = open();
      const issue = {
        source: 'github:acme/app',
        id: '12',
        identifier: '#12',
        url: 'https://github.com/acme/app/issues/12',
        state: 'open',
      };
      const withIssue = store.createTask({ ...created, issue }).taskId;
      const without = store.createTask(created).taskId;
      store.append(withIssue, [{ type: 'task_completed' }], { status: 'completed' });
      expect(store.task(withIssue)?.issue).toEqual(issue);
      expect(store.task(without)?.issue).toBeNull();
      expect(store.tasks().map((t) => [t.id, t.issue])).toEqual([
        [without, null],
        [withIssue, issue],
      ]);
      const read = store.task(withIssue)!.issue!;
      read.state = 'closed';
      expect(store.task(withIssue)?.issue?.state).toBe('open');
    });

    it('lists tasks newest first, filtered by status, paged', () => {
      store = open();
      const ids = [1, 2, 3].map(() => store.createTask(created).taskId);
      store.append(ids[1]!, [{ type: 'task_completed' }], { status: 'completed' });
      expect(store.tasks().map((t) => t.id)).toEqual([...ids].reverse());
      expect(store.tasks({ status: ['completed'] }).map((t) => t.id)).toEqual([ids[1]]);
      expect(store.tasks({ limit: 1, offset: 1 }).map((t) => t.id)).toEqual([ids[1]]);
    });

    it('lists the tasks of one pipeline, with the status filter and the page applied to them', () => {
      store = open();
      const [p1, q1, p2, q2] = ['p', 'q', 'p', 'q'].map(
        (name) => store.createTask({ ...created, pipeline: name }).taskId,
      );
      store.append(q1!, [{ type: 'task_completed' }], { status: 'completed' });
      expect(store.tasks({ pipeline: 'q' }).map((t) => t.id)).toEqual([q2, q1]);
      expect(store.tasks({ pipeline: 'p', limit: 1 }).map((t) => t.id)).toEqual([p2]);
      expect(store.tasks({ pipeline: 'p', limit: 1, offset: 1 }).map((t) => t.id)).toEqual([p1]);
      expect(store.tasks({ pipeline: 'q', status: ['completed'] }).map((t) => t.id)).toEqual([q1]);
      expect(store.tasks({ pipeline: 'none' })).toEqual([]);
    });

    it('hands back events of its own: changing one that was read changes nothing stored', () => {
      store = open();
      const { taskId } = store.createTask(created);
      const [read] = [...store.events(taskId)];
      if (read?.type !== 'task_created') throw new Error('no task_created read back');
      read.input = 'changed';
      read.definition.agents.length = 0;
      const [again] = [...store.events(taskId)];
      expect(again).toMatchObject({ type: 'task_created', input: 'do it' });
      expect(again?.type === 'task_created' && again.definition.agents.map((a) => a.id)).toEqual(['a']);
    });

    it('refuses an append to a task it does not have', () => {
      store = open();
      expect(() => store.append('T-000000', [{ type: 'task_completed' }], { status: 'completed' })).toThrow(
        NotFoundError,
      );
      expect([...store.events('T-000000')]).toEqual([]);
      expect(store.task('T-000000')).toBeUndefined();
    });

    it('restarts a task from a seq: later events are set aside, even after the task ended', () => {
      store = open();
      const { taskId } = store.createTask(created);
      const started = (stage: number, agent: string) =>
        ({ type: 'stage_started', stage, activation: 'a1', agent, input: 'x', attempt: 1 }) as const;
      const [, second] = store.append(taskId, [started(1, 'a'), started(2, 'b')], { status: 'running' });
      store.append(taskId, [{ type: 'task_failed', reason: 'no', stage: 2, errorKind: null }], {
        status: 'failed',
      });
      const restarted = store.restart(
        taskId,
        second!.seq,
        { type: 'task_restarted', fromStage: 2 },
        {
          status: 'running',
        },
      );
      expect(restarted.seq).toBeGreaterThan(second!.seq);
      expect([...store.events(taskId)].map((e) => e.type)).toEqual([
        'task_created',
        'stage_started',
        'task_restarted',
      ]);
      expect(store.task(taskId)).toMatchObject({ status: 'running', currentAgent: 'a' });
      expect(store.eventsSince(0, 100).filter((e) => e.taskId === taskId)).toHaveLength(3);
      expect([...store.eventsOfTypes(['stage_started'])].filter((e) => e.taskId === taskId)).toHaveLength(1);
    });

    it('reads all tasks’ events after a global seq, at most `limit` of them', () => {
      store = open();
      const a = store.createTask(created);
      const b = store.createTask(created);
      store.append(a.taskId, [{ type: 'task_completed' }], { status: 'completed' });
      const since = store.eventsSince(a.seq, 10);
      expect(since.map((e) => e.taskId)).toEqual([b.taskId, a.taskId]);
      expect(store.eventsSince(a.seq, 1).map((e) => e.seq)).toEqual([b.seq]);
    });

    it('closes a provider until its reset; a later reset wins, an earlier one does not shorten it', () => {
      store = open();
      const now = new Date('2026-11-29T12:00:00Z');
      store.closeProvider('gemini', '2026-11-29T12:10:00Z');
      store.closeProvider('claude', '2026-11-29T12:05:00Z');
      store.closeProvider('claude', '2026-11-29T12:01:00Z');
      expect(store.closedProviders(now)).toEqual([
        { provider: 'claude', resetAt: '2026-11-29T12:05:00Z' },
        { provider: 'gemini', resetAt: '2026-11-29T12:10:00Z' },
      ]);
      store.closeProvider('claude', '2026-11-29T12:20:00Z');
      expect(store.closedProviders(new Date('2026-11-29T12:15:00Z'))).toEqual([
        { provider: 'claude', resetAt: '2026-11-29T12:20:00Z' },
      ]);
    });

    it('keeps a window per provider key: two endpoints or accounts of one runtime close apart', () => {
      store = open();
      const now = new Date('2026-11-29T12:00:00Z');
      store.closeProvider('openai@api.openai.com#5d41402a', '2026-11-29T12:01:02Z');
      store.closeProvider('openai@127.0.0.1:11434', '2026-11-29T12:00:20Z');
      expect(store.closedProviders(now)).toEqual([
        { provider: 'openai@127.0.0.1:11434', resetAt: '2026-11-29T12:00:20Z' },
        { provider: 'openai@api.openai.com#5d41402a', resetAt: '2026-11-29T12:01:02Z' },
      ]);
      expect(store.closedProviders(new Date('2026-11-29T12:00:30Z')).map((w) => w.provider)).toEqual([
        'openai@api.openai.com#5d41402a',
      ]);
    });

    it('claims a tracker issue once: a second claim is refused until it is released', () => {
      store = open();
      const now = new Date('2026-12-05T12:00:00.000Z');
      const first = store.claimIssue('github:acme/app', '12', now);
      expect(first).toEqual({
        source: 'github:acme/app',
        issueId: '12',
        taskId: null,
        attempts: 0,
        retryAt: null,
        commentId: null,
        pullRequest: null,
        claimedAt: now.toISOString(),
      });
      expect(store.claimIssue('github:acme/app', '12', now)).toBeNull();
      // another tracker's issue 12 is another issue
      expect(store.claimIssue('backlog:/p/backlog', '12', now)).not.toBeNull();
      expect(store.updateIssueClaim('github:acme/app', '12', { taskId: 'T-000001' })).toBe(true);
      // a claim with a task is held however old it is
      expect(store.claimIssue('github:acme/app', '12', new Date('2027-01-01T00:00:00Z'))).toBeNull();
      expect(store.issueClaims('github:acme/app')).toMatchObject([{ issueId: '12', taskId: 'T-000001' }]);
      store.releaseIssue('github:acme/app', '12');
      expect(store.issueClaims('github:acme/app')).toEqual([]);
      expect(store.claimIssue('github:acme/app', '12', now)).not.toBeNull();
    });

    it('takes over a claim left without a task past its time; a young one stays refused', () => {
      store = open();
      const then = new Date('2026-12-05T12:00:00.000Z');
      store.claimIssue('s', 'a', then);
      expect(store.claimIssue('s', 'a', new Date(then.getTime() + 60_000))).toBeNull();
      const later = new Date(then.getTime() + 11 * 60_000);
      expect(store.claimIssue('s', 'a', later)).toMatchObject({
        taskId: null,
        claimedAt: later.toISOString(),
      });
    });

    it("records a claim's tries and retry time; a retry is taken once (compare and set on its time)", () => {
      store = open();
      store.claimIssue('s', 'a', new Date());
      const retryAt = '2026-12-05T12:00:10.000Z';
      expect(store.updateIssueClaim('s', 'a', { taskId: 'T-1', attempts: 1, retryAt })).toBe(true);
      expect(store.issueClaims('s')).toMatchObject([{ taskId: 'T-1', attempts: 1, retryAt }]);
      expect(store.updateIssueClaim('s', 'a', { retryAt: null }, retryAt)).toBe(true);
      expect(store.updateIssueClaim('s', 'a', { retryAt: null }, retryAt)).toBe(false);
      expect(store.updateIssueClaim('s', 'a', { attempts: 2 }, null)).toBe(true);
      expect(store.issueClaims('s')).toMatchObject([{ attempts: 2, retryAt: null }]);
      expect(store.updateIssueClaim('s', 'missing', { attempts: 1 })).toBe(false);
      expect(store.updateIssueClaim('s', 'a', { commentId: 'c-7' })).toBe(true);
      expect(store.issueClaims('s')).toMatchObject([{ commentId: 'c-7', attempts: 2 }]);
      const url = 'https://github.com/acme/app/pull/3';
      expect(store.updateIssueClaim('s', 'a', { pullRequest: url })).toBe(true);
      expect(store.issueClaims('s')).toMatchObject([{ pullRequest: url, commentId: 'c-7' }]);
    });

    it('leases a task to one live process at a time; a dead holder’s lease is free', () => {
      store = open();
      const { taskId } = store.createTask(created);
      const me = { pid: process.pid, host: 'this-host' };
      expect(store.tryLease(taskId, currentHolder())).toBe(true);
      expect(store.tryLease(taskId, here(999_999_999))).toBe(false);
      store.releaseLease(taskId, currentHolder());
      expect(store.leaseHolder(taskId)).toBeNull();
      expect(store.tryLease(taskId, here(999_999_998))).toBe(true);
      // that pid does not exist here: the lease counts as free
      expect(store.leaseHolder(taskId)).toBeNull();
      expect(store.tryLease(taskId, me)).toBe(true);
    });

    it('releases a lease only for its holder, and leases no task it does not have', () => {
      store = open();
      const { taskId } = store.createTask(created);
      const me = currentHolder();
      expect(store.tryLease(taskId, me)).toBe(true);
      store.releaseLease(taskId, { pid: process.pid, host: 'another-host' });
      expect(store.leaseHolder(taskId)).toEqual(me);
      expect(store.tryLease(taskId, { pid: process.pid, host: 'another-host' })).toBe(false);
      expect(() => store.tryLease('T-000000', me)).toThrow(NotFoundError);
    });

    it("keeps a dead holder's lease on record, marked not alive, until it is released or taken", () => {
      store = open();
      const { taskId } = store.createTask(created);
      expect(store.lease(taskId)).toBeNull();
      const me = currentHolder();
      expect(store.tryLease(taskId, me)).toBe(true);
      expect(store.lease(taskId)).toEqual({ holder: me, alive: true });
      store.releaseLease(taskId, me);
      expect(store.lease(taskId)).toBeNull();
      const dead = here(999_999_997);
      expect(store.tryLease(taskId, dead)).toBe(true);
      expect(store.lease(taskId)).toEqual({ holder: dead, alive: false });
      expect(store.tryLease(taskId, me)).toBe(true);
      expect(store.lease(taskId)).toEqual({ holder: me, alive: true });
    });

    it('takes a pid on this host for a live holder unless it is in this boot and PID namespace', () => {
      store = open();
      const { taskId } = store.createTask(created);
      // the same hostname, a pid that does not run here: another container's, or one recorded
      // without its scope (an older troupe); either may be a live process this one cannot see
      const elsewhere = { ...here(999_999_996), pidNamespace: 'pid:[1]' };
      const unscoped = { pid: 999_999_995, host: hostname() };
      for (const holder of process.platform === 'linux' ? [elsewhere, unscoped] : [elsewhere]) {
        expect(store.tryLease(taskId, holder)).toBe(true);
        expect(store.lease(taskId)).toEqual({ holder, alive: true });
        expect(store.tryLease(taskId, currentHolder())).toBe(false);
        store.releaseLease(taskId, holder);
      }
      // the same pid in another namespace is another process: not this one's lease to renew
      expect(store.tryLease(taskId, { ...currentHolder(), pidNamespace: 'pid:[1]' })).toBe(true);
      expect(store.tryLease(taskId, currentHolder())).toBe(false);
    });
  });
}

/** A holder on this host, in this process's boot and PID namespace, with another pid. */
const here = (pid: number): LeaseHolder => ({ ...currentHolder(), pid });
