import { type Tracker, TrackerError, type TrackerIssue } from '../core/tracker.js';
import { type LinearConnection, linearRequest } from './linear-graphql.js';
import { normalState, parseLinearIssue, toTrackerIssue } from './linear-issue.js';
import {
  ASSIGNED_CANDIDATES,
  CANDIDATES,
  COMMENT_CREATE,
  COMMENT_UPDATE,
  ISSUE_ASSIGNEE,
  ISSUE_UPDATE,
  PAGE_SIZE,
  RELATION_PAGE_SIZE,
  STATES,
  TEAM_STATES,
  VIEWER,
} from './linear-queries.js';

/**
 * Linear as a tracker (docs/trackers.md, "Linear"), over its GraphQL API with Symphony's
 * semantics: the issues of one project (by slug) in the active states, not in a terminal one;
 * a claim assigns the API key's own user; one progress comment edited in place.
 */

export interface LinearTrackerOptions {
  /** The project's slug id, as in its URL (`linear.app/<team>/project/<name>-<slugId>`). */
  projectSlug: string;
  /** `https://api.linear.app/graphql` unless set. */
  endpoint?: string;
  /** Default `Todo`, `In Progress`. */
  activeStates?: string[];
  /** Default `Closed`, `Cancelled`, `Canceled`, `Duplicate`, `Done`. */
  terminalStates?: string[];
  /**
   * Symphony's `tracker.assignee`: only issues assigned to this Linear user id (`me`: the key's
   * own user) are candidates. The assignment is then the person's routing, which troupe leaves
   * as it is: a claim checks it and writes nothing, a release writes nothing.
   */
  assignee?: string;
  /** Per request (default 30 s). */
  timeoutMs?: number;
}

export interface LinearTrackerWorld {
  env: NodeJS.ProcessEnv;
}

export const LINEAR_ENDPOINT = 'https://api.linear.app/graphql';
export const DEFAULT_ACTIVE_STATES = ['Todo', 'In Progress'];
export const DEFAULT_TERMINAL_STATES = ['Closed', 'Cancelled', 'Canceled', 'Duplicate', 'Done'];
/** Linear's largest page, for a team's workflow states. */
const MAX_PAGE = 250;
/** 50 pages of 50: a project larger than that is a selection to narrow, not a poll. */
const MAX_PAGES = 200;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function openLinearTracker(options: LinearTrackerOptions, world: LinearTrackerWorld): Tracker {
  const endpoint = checkedEndpoint(options.endpoint ?? LINEAR_ENDPOINT);
  const slug = options.projectSlug?.trim() ?? '';
  if (!/^[A-Za-z0-9-]{1,100}$/.test(slug)) {
    throw new TrackerError('invalid', `linear: ${JSON.stringify(slug.slice(0, 100))} is not a project slug`, {
      hint: 'the slug is the end of the project URL, e.g. 0a1b2c3d4e5f',
    });
  }
  const apiKey = world.env.LINEAR_API_KEY?.trim() ?? '';
  if (apiKey === '') {
    throw new TrackerError('auth', 'linear: LINEAR_API_KEY is not set', {
      hint: 'create a personal API key in Linear (Settings, Security & access) and export LINEAR_API_KEY',
    });
  }
  return new LinearTracker(
    { ...options, projectSlug: slug },
    { endpoint, apiKey, timeoutMs: options.timeoutMs ?? 30_000 },
  );
}

class LinearTracker implements Tracker {
  readonly source: string;
  private readonly active: string[];
  private readonly terminal: Set<string>;
  private viewerId: string | null = null;

  constructor(
    private readonly options: LinearTrackerOptions,
    private readonly connection: LinearConnection,
  ) {
    const host = connection.endpoint === LINEAR_ENDPOINT ? '' : `${new URL(connection.endpoint).host}/`;
    this.source = `linear:${host}${options.projectSlug}`;
    this.active = names(options.activeStates, DEFAULT_ACTIVE_STATES);
    this.terminal = new Set(names(options.terminalStates, DEFAULT_TERMINAL_STATES).map(normalState));
  }

  async candidates(): Promise<TrackerIssue[]> {
    const wanted = new Set(this.active.map(normalState));
    const issues: TrackerIssue[] = [];
    const assigneeId = await this.routedAssignee();
    let after: string | null = null;
    for (let page = 1; ; page++) {
      const variables = {
        projectSlug: this.options.projectSlug,
        stateNames: this.active,
        first: PAGE_SIZE,
        relationFirst: RELATION_PAGE_SIZE,
        after,
      };
      const data = assigneeId
        ? await this.request(ASSIGNED_CANDIDATES, 'list the issues', { ...variables, assigneeId })
        : await this.request(CANDIDATES, 'list the issues', variables);
      const connection = record(data.issues, 'issues');
      for (const node of list(connection.nodes, 'issues.nodes')) {
        const issue = toTrackerIssue(parseLinearIssue(node));
        const state = normalState(issue.state);
        if (wanted.has(state) && !this.terminal.has(state)) issues.push(issue);
      }
      const pageInfo = record(connection.pageInfo, 'issues.pageInfo');
      if (pageInfo.hasNextPage !== true) return issues;
      const cursor = pageInfo.endCursor;
      if (typeof cursor !== 'string' || cursor === '' || cursor === after) {
        throw new TrackerError(
          'invalid',
          'linear: the API said there is another page of issues but gave no new cursor',
        );
      }
      if (page >= MAX_PAGES) {
        throw new TrackerError(
          'invalid',
          `linear: ${this.source} has more than ${MAX_PAGES * PAGE_SIZE} active issues`,
          {
            hint: 'narrow the active states or split the project',
          },
        );
      }
      after = cursor;
    }
  }

  async states(ids: readonly string[]): Promise<Map<string, string | null>> {
    const found = new Map<string, string | null>(ids.map((id) => [id, null]));
    const asked = [...new Set(ids.filter((id) => UUID.test(id)))];
    // routed by assignee, an issue given to someone else is out of reach, as Symphony stops it
    const routed = asked.length > 0 ? await this.routedAssignee() : null;
    for (let start = 0; start < asked.length; start += PAGE_SIZE) {
      const batch = asked.slice(start, start + PAGE_SIZE);
      const data = await this.request(STATES, 'read issue states', { ids: batch, first: batch.length });
      for (const node of list(record(data.issues, 'issues').nodes, 'issues.nodes')) {
        const issue = record(node, 'issues.nodes[]');
        const state = issue.state === null ? null : record(issue.state, 'state').name;
        if (routed !== null && assigneeIdOf(issue) !== routed) continue;
        if (typeof issue.id === 'string' && found.has(issue.id)) {
          found.set(issue.id, typeof state === 'string' ? state : null);
        }
      }
    }
    return found;
  }

  /** Assigns the issue to the key's own user; refused when someone else has it. */
  async claim(id: string): Promise<void> {
    const routed = await this.routedAssignee();
    if (routed !== null) {
      if ((await this.assignee(id)) === routed) return;
      throw new TrackerError(
        'invalid',
        `linear: issue ${id} is no longer assigned to ${this.options.assignee}`,
        {
          hint: 'tracker.assignee routes issues by their assignee: assign it back for troupe to take it',
        },
      );
    }
    const viewer = await this.viewer();
    const assignee = await this.assignee(id);
    if (assignee === viewer) return;
    if (assignee !== null) {
      throw new TrackerError('invalid', `linear: issue ${id} is assigned to someone else`, {
        hint: 'unassign it in Linear for troupe to take it',
      });
    }
    await this.update(id, { assigneeId: viewer }, `assign issue ${id}`);
  }

  async release(id: string): Promise<void> {
    // routed by assignee: the assignment is the person's, not troupe's claim
    if (this.options.assignee?.trim()) return;
    const viewer = await this.viewer();
    // someone else took it over meanwhile: theirs to keep
    if ((await this.assignee(id)) !== viewer) return;
    await this.update(id, { assigneeId: null }, `unassign issue ${id}`);
  }

  async upsertComment(id: string, body: string, commentId: string | null): Promise<string> {
    checkId(id, 'issue');
    if (commentId !== null) {
      checkId(commentId, 'comment');
      try {
        const data = await this.request(COMMENT_UPDATE, `edit comment ${commentId}`, {
          id: commentId,
          input: { body },
        });
        return commentIdOf(data.commentUpdate);
      } catch (error) {
        // someone deleted the progress comment: post it again rather than lose the progress
        if (!(error instanceof TrackerError && error.kind === 'not_found')) throw error;
      }
    }
    const data = await this.request(COMMENT_CREATE, `comment on issue ${id}`, {
      input: { issueId: id, body },
    });
    return commentIdOf(data.commentCreate);
  }

  /** A comment naming the URL: Linear's own GitHub integration makes the rich link from the branch. */
  async linkPullRequest(id: string, url: string): Promise<void> {
    if (!/^https?:\/\/\S+$/.test(url)) {
      throw new TrackerError(
        'invalid',
        `linear: ${JSON.stringify(url.slice(0, 200))} is not a pull request URL`,
      );
    }
    await this.upsertComment(id, `troupe opened a pull request for this issue: ${url}`, null);
  }

  async moveTo(id: string, state: string): Promise<void> {
    checkId(id, 'issue');
    const data = await this.request(TEAM_STATES, `read the workflow states of issue ${id}`, {
      id,
      first: MAX_PAGE,
    });
    const issue = record(data.issue, 'issue');
    const states = list(
      record(record(issue.team, 'issue.team').states, 'team.states').nodes,
      'states.nodes',
    ).map((node) => record(node, 'states.nodes[]'));
    const match = states.find(
      (s) => typeof s.name === 'string' && normalState(s.name) === normalState(state),
    );
    if (!match || typeof match.id !== 'string') {
      const known = states.map((s) => String(s.name)).join(', ');
      throw new TrackerError(
        'invalid',
        `linear: cannot move issue ${id} to ${JSON.stringify(state.slice(0, 100))}: its team's states are ${known}`,
      );
    }
    await this.update(id, { stateId: match.id }, `move issue ${id} to ${match.name}`);
  }

  /** The user id `tracker.assignee` names (`me`: the key's viewer); null: no routing by assignee. */
  private async routedAssignee(): Promise<string | null> {
    const assignee = this.options.assignee?.trim() ?? '';
    if (assignee === '') return null;
    return assignee.toLowerCase() === 'me' ? this.viewer() : assignee;
  }

  private async viewer(): Promise<string> {
    if (this.viewerId) return this.viewerId;
    const data = await this.request(VIEWER, 'read who the key belongs to', {});
    const id = record(data.viewer, 'viewer').id;
    if (typeof id !== 'string' || id === '')
      throw new TrackerError('invalid', 'linear: the API named no viewer');
    this.viewerId = id;
    return id;
  }

  private async assignee(id: string): Promise<string | null> {
    checkId(id, 'issue');
    const data = await this.request(ISSUE_ASSIGNEE, `read issue ${id}`, { id });
    return assigneeIdOf(record(data.issue, 'issue'));
  }

  private async update(id: string, input: Record<string, unknown>, what: string): Promise<void> {
    const data = await this.request(ISSUE_UPDATE, what, { id, input });
    if (record(data.issueUpdate, 'issueUpdate').success !== true) {
      throw new TrackerError('invalid', `linear: ${what} was not done (success false)`);
    }
  }

  private request(document: string, what: string, variables: Record<string, unknown>) {
    return linearRequest(this.connection, document, variables, what);
  }
}

function assigneeIdOf(issue: Record<string, unknown>): string | null {
  if (issue.assignee === null || issue.assignee === undefined) return null;
  const id = record(issue.assignee, 'issue.assignee').id;
  return typeof id === 'string' ? id : null;
}

function names(given: string[] | undefined, fallback: string[]): string[] {
  const trimmed = (given ?? []).map((name) => name.trim()).filter((name) => name !== '');
  return trimmed.length > 0 ? trimmed : fallback;
}

/** An answer of the API is hostile input too: a missing member is one clear line. */
function record(value: unknown, where: string): Record<string, unknown> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value))
    return value as Record<string, unknown>;
  throw new TrackerError('invalid', `linear: the API answered without ${where}`);
}

function list(value: unknown, where: string): unknown[] {
  if (Array.isArray(value)) return value;
  throw new TrackerError('invalid', `linear: the API answered without ${where}`);
}

function commentIdOf(payload: unknown): string {
  const id = record(record(payload, 'the comment payload').comment, 'the comment').id;
  if (typeof id !== 'string' || id === '')
    throw new TrackerError('invalid', 'linear: the API named no comment id');
  return id;
}

/** Linear ids are uuids; an issue may also be named by its identifier (`ENG-42`). */
function checkId(id: string, what: 'issue' | 'comment') {
  const ok = UUID.test(id) || (what === 'issue' && /^[A-Za-z0-9]{1,10}-\d{1,9}$/.test(id));
  if (!ok)
    throw new TrackerError(
      'invalid',
      `linear: ${JSON.stringify(id.slice(0, 60))} is not a Linear ${what} id`,
    );
}

/** https, or http on loopback only (tests, a local proxy), so the key never crosses a network in clear. */
function checkedEndpoint(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TrackerError(
      'invalid',
      `linear: the endpoint ${JSON.stringify(value.slice(0, 200))} is not a URL`,
    );
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new TrackerError(
      'invalid',
      `linear: the endpoint ${url.origin} must be https (the key would travel in clear)`,
    );
  }
  if (url.username || url.password || url.hash) {
    throw new TrackerError(
      'invalid',
      'linear: the endpoint must be a plain URL, without credentials or fragment',
    );
  }
  return url.href;
}
