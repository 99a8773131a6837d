import { afterEach, describe, expect, it } from 'vitest';
import { type Tracker, TrackerError } from '../core/tracker.js';

/**
 * What every tracker adapter must do (docs/trackers.md): the backlog runs it on files, GitHub
 * and Linear on loopback mocks of their APIs written from their documentation. Each adapter's
 * test seeds the same issues in its own backing and reads back what the adapter did.
 */

/** An issue to seed, in the adapter's own state names (`states` below). */
export interface SeedIssue {
  key: string;
  title: string;
  description: string;
  state: 'active' | 'working' | 'done';
  labels: string[];
  priority: number | null;
  /** Keys of seeded issues this one waits for. */
  blocked_by: string[];
}

/** What the test can see in the adapter's backing, by the tracker's own issue id. */
export interface TrackerBacking {
  tracker: Tracker;
  /** The tracker id a seeded issue got. */
  idOf(key: string): string;
  /** The adapter's name for each seeded state. */
  states: Record<SeedIssue['state'], string>;
  /** The issue's comments' texts, oldest first. */
  comments(id: string): Promise<string[]>;
  state(id: string): Promise<string>;
  /** Whatever shows the claim (an assignee, a label): non-empty while claimed by `by`. */
  claimedBy(id: string): Promise<string[]>;
  close(): Promise<void>;
}

/** The TrackerError a call fails with (the test fails if it succeeds or throws anything else). */
export function trackerFailure(promise: Promise<unknown>): Promise<TrackerError> {
  return promise.then(
    () => expect.fail('expected a TrackerError'),
    (error: unknown) => {
      expect(error).toBeInstanceOf(TrackerError);
      return error as TrackerError;
    },
  );
}

export const SEED: SeedIssue[] = [
  {
    key: 'a',
    title: 'Add a health check',
    description: 'GET /health returns ok.',
    state: 'active',
    labels: ['Backend'],
    priority: 2,
    blocked_by: [],
  },
  {
    key: 'b',
    title: 'Show the status',
    description: 'A page shows /health.',
    state: 'active',
    labels: ['frontend'],
    priority: 3,
    blocked_by: ['a'],
  },
  {
    key: 'c',
    title: 'Being worked on',
    description: 'Someone has it.',
    state: 'working',
    labels: [],
    priority: null,
    blocked_by: [],
  },
  {
    key: 'd',
    title: 'Shipped',
    description: 'Long done.',
    state: 'done',
    labels: [],
    priority: 1,
    blocked_by: [],
  },
];

export function trackerContract(name: string, setup: (seed: SeedIssue[]) => Promise<TrackerBacking>) {
  describe(`${name} tracker contract`, () => {
    let backing: TrackerBacking | null = null;
    const open = async () => {
      backing = await setup(SEED);
      return backing;
    };
    afterEach(async () => {
      await backing?.close();
      backing = null;
    });

    it('lists the active issues with their fields, not the finished ones', async () => {
      const b = await open();
      const issues = await b.tracker.candidates();
      const byTitle = new Map(issues.map((i) => [i.title, i]));
      expect(byTitle.has('Shipped')).toBe(false);
      const a = byTitle.get('Add a health check')!;
      expect(a).toMatchObject({
        id: b.idOf('a'),
        description: 'GET /health returns ok.',
        labels: ['backend'],
        state: b.states.active,
      });
      expect(a.identifier).not.toBe('');
      const blocked = byTitle.get('Show the status')!;
      expect(blocked.blocked_by.map((x) => x.id)).toEqual([b.idOf('a')]);
    });

    it('reads the state of given issues; an unknown one is null', async () => {
      const b = await open();
      const states = await b.tracker.states([b.idOf('a'), b.idOf('d'), 'no-such-issue-999']);
      expect(states.get(b.idOf('a'))).toBe(b.states.active);
      expect(states.get(b.idOf('d'))).toBe(b.states.done);
      expect(states.get('no-such-issue-999')).toBeNull();
    });

    it('claims and releases an issue where people can see it', async () => {
      const b = await open();
      await b.tracker.claim(b.idOf('a'), 'troupe');
      expect((await b.claimedBy(b.idOf('a'))).length).toBeGreaterThan(0);
      await b.tracker.release(b.idOf('a'), 'troupe');
      expect(await b.claimedBy(b.idOf('a'))).toEqual([]);
    });

    it('keeps one progress comment up to date rather than posting a stream', async () => {
      const b = await open();
      const id = b.idOf('a');
      const comment = await b.tracker.upsertComment(id, 'troupe: planning', null);
      const again = await b.tracker.upsertComment(id, 'troupe: building (stage 2)', comment);
      expect(again).toBe(comment);
      expect(await b.comments(id)).toEqual(['troupe: building (stage 2)']);
    });

    it('links a pull request and moves the issue to the hand-off state', async () => {
      const b = await open();
      const id = b.idOf('a');
      await b.tracker.linkPullRequest(id, 'https://example.test/pr/7');
      expect((await b.comments(id)).join('\n')).toContain('https://example.test/pr/7');
      await b.tracker.moveTo(id, b.states.done);
      expect(await b.state(id)).toBe(b.states.done);
      expect((await b.tracker.candidates()).map((i) => i.id)).not.toContain(id);
    });
  });
}
