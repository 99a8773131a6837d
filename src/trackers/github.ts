import { Octokit } from '@octokit/rest';
import { type Tracker, TrackerError, type TrackerIssue } from '../core/tracker.js';
import { githubError } from './github-errors.js';
import { keepEtags } from './github-etag.js';
import {
  blockerRef,
  blockersInBody,
  isPullRequest,
  type RestIssue,
  restIssue,
  stateOf,
  toTrackerIssue,
} from './github-issue.js';
import { type GitHubToken, resolveGitHubToken } from './github-token.js';

/**
 * GitHub Issues as a tracker (docs/trackers.md, "GitHub Issues"), through Octokit's REST client:
 * open issues (never pull requests) of one repository, selected by labels, milestone and
 * assignee; a claim is a label; one progress comment edited in place.
 */

export interface GitHubTrackerOptions {
  owner: string;
  repo: string;
  /** `https://api.github.com` (the default), or GitHub Enterprise Server's `https://HOST/api/v3`. */
  apiUrl?: string;
  /** Every one of these labels is required. */
  labels?: string[];
  /** A milestone's title or number, `*` (any) or `none`. */
  milestone?: string;
  /** A login, `*` (anyone) or `none`. */
  assignee?: string;
  /** The label that shows an issue is taken (default `troupe`). */
  claimLabel?: string;
  /** A label `moveTo` adds as the hand-off state, instead of closing the issue. */
  handoffLabel?: string;
  /** Per request (default 30 s). */
  timeoutMs?: number;
}

export interface GitHubTrackerWorld {
  env: NodeJS.ProcessEnv;
  /** The `gh` program asked for a token when no variable holds one. */
  gh?: string;
}

const PUBLIC_API = 'https://api.github.com';
/** GitHub's largest page. */
const PER_PAGE = 100;
/** Requests in flight at once for per-issue calls (states, dependencies): GitHub asks for few. */
const CONCURRENCY = 4;
/** GitHub refuses a comment longer than this. */
const MAX_COMMENT = 65_536;

export async function openGitHubTracker(
  options: GitHubTrackerOptions,
  world: GitHubTrackerWorld,
): Promise<Tracker> {
  const apiUrl = checkedApiUrl(options.apiUrl ?? PUBLIC_API);
  checkRepository(options.owner, options.repo);
  const token = await resolveGitHubToken({ env: world.env, apiUrl, gh: world.gh });
  return new GitHubTracker({ ...options, apiUrl }, token);
}

class GitHubTracker implements Tracker {
  readonly source: string;
  private readonly octokit: Octokit;
  private readonly where: { owner: string; repo: string };
  private readonly handoffLabel: string | null;
  private readonly claimLabel: string;
  private milestoneNumber: string | undefined;

  constructor(
    private readonly options: GitHubTrackerOptions & { apiUrl: string },
    private readonly token: GitHubToken,
  ) {
    const host = options.apiUrl === PUBLIC_API ? '' : `${new URL(options.apiUrl).host}/`;
    this.source = `github:${host}${options.owner}/${options.repo}`;
    this.where = { owner: options.owner, repo: options.repo };
    this.handoffLabel = options.handoffLabel?.trim() || null;
    this.claimLabel = options.claimLabel?.trim() || 'troupe';
    const timeoutMs = options.timeoutMs ?? 30_000;
    const quiet = () => {};
    this.octokit = new Octokit({
      auth: token.token,
      baseUrl: options.apiUrl,
      userAgent: 'troupe',
      log: { debug: quiet, info: quiet, warn: quiet, error: quiet },
      request: {
        // a server that never answers is an unreachable tracker, not a poll that hangs
        fetch: (url: string, init: RequestInit) =>
          fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) }),
      },
    });
    keepEtags(this.octokit);
  }

  async candidates(): Promise<TrackerIssue[]> {
    const raw = await this.call('list the issues', async () =>
      this.octokit.paginate(this.octokit.rest.issues.listForRepo, {
        ...this.where,
        state: 'open',
        labels: this.options.labels?.length ? this.options.labels.join(',') : undefined,
        milestone: await this.milestone(),
        assignee: this.options.assignee,
        sort: 'created',
        direction: 'asc',
        per_page: PER_PAGE,
      }),
    );
    const issues = raw
      .map(parseIssue)
      .filter((issue) => !isPullRequest(issue) && stateOf(issue, this.handoffLabel) === 'open');
    const byNumber = new Map(issues.map((issue) => [issue.number, issue]));
    return inBatches(issues, (issue) => this.withBlockers(issue, byNumber));
  }

  async states(ids: readonly string[]): Promise<Map<string, string | null>> {
    const found = await inBatches([...ids], async (id) => {
      if (!/^\d{1,9}$/.test(id)) return [id, null] as const;
      try {
        return [id, stateOf(await this.issue(Number(id)), this.handoffLabel)] as const;
      } catch (error) {
        if (error instanceof TrackerError && error.kind === 'not_found') return [id, null] as const;
        throw error;
      }
    });
    return new Map(found);
  }

  async claim(id: string): Promise<void> {
    const number = issueNumber(id);
    await this.call(`label #${number} ${this.claimLabel}`, () =>
      this.octokit.rest.issues.addLabels({ ...this.where, issue_number: number, labels: [this.claimLabel] }),
    );
  }

  async release(id: string): Promise<void> {
    const number = issueNumber(id);
    try {
      await this.call(`unlabel #${number} ${this.claimLabel}`, () =>
        this.octokit.rest.issues.removeLabel({ ...this.where, issue_number: number, name: this.claimLabel }),
      );
    } catch (error) {
      // already without the label (a person took it off): released all the same
      if (!(error instanceof TrackerError && error.kind === 'not_found')) throw error;
    }
  }

  async upsertComment(id: string, body: string, commentId: string | null): Promise<string> {
    const number = issueNumber(id);
    const text =
      body.length > MAX_COMMENT ? `${body.slice(0, MAX_COMMENT - 40)}\n\n…(cut to GitHub's limit)` : body;
    if (commentId !== null) {
      if (!/^\d{1,20}$/.test(commentId)) {
        throw new TrackerError('invalid', `github: ${JSON.stringify(commentId)} is not a GitHub comment id`);
      }
      try {
        const { data } = await this.call(`edit comment ${commentId} on #${number}`, () =>
          this.octokit.rest.issues.updateComment({
            ...this.where,
            comment_id: Number(commentId),
            body: text,
          }),
        );
        return String(data.id);
      } catch (error) {
        // someone deleted the progress comment: post it again rather than lose the progress
        if (!(error instanceof TrackerError && error.kind === 'not_found')) throw error;
      }
    }
    const { data } = await this.call(`comment on #${number}`, () =>
      this.octokit.rest.issues.createComment({ ...this.where, issue_number: number, body: text }),
    );
    return String(data.id);
  }

  async linkPullRequest(id: string, url: string): Promise<void> {
    if (!/^https?:\/\/\S+$/.test(url)) {
      throw new TrackerError(
        'invalid',
        `github: ${JSON.stringify(url.slice(0, 200))} is not a pull request URL`,
      );
    }
    await this.upsertComment(id, `troupe opened a pull request for this issue: ${url}`, null);
  }

  async moveTo(id: string, state: string): Promise<void> {
    const number = issueNumber(id);
    const target = state.trim().toLowerCase();
    if (target === 'closed' || target === 'open') {
      await this.call(`${target === 'closed' ? 'close' : 'reopen'} #${number}`, () =>
        this.octokit.rest.issues.update({
          ...this.where,
          issue_number: number,
          state: target,
          state_reason: target === 'closed' ? 'completed' : 'reopened',
        }),
      );
    } else if (this.handoffLabel && target === this.handoffLabel.toLowerCase()) {
      await this.call(`label #${number} ${this.handoffLabel}`, () =>
        this.octokit.rest.issues.addLabels({
          ...this.where,
          issue_number: number,
          labels: [this.handoffLabel!],
        }),
      );
    } else {
      const known = ['open', 'closed', ...(this.handoffLabel ? [this.handoffLabel] : [])].join(', ');
      throw new TrackerError(
        'invalid',
        `github: cannot move #${number} to ${JSON.stringify(state)}: the states are ${known}`,
      );
    }
  }

  private async issue(number: number): Promise<RestIssue> {
    const { data } = await this.call(`read #${number}`, () =>
      this.octokit.rest.issues.get({ ...this.where, issue_number: number }),
    );
    return parseIssue(data);
  }

  /**
   * Its blockers from GitHub's issue dependencies (asked only for an issue whose summary counts
   * some), or, where the API has none (no summary at all), from its body's `blocked by #N` lines.
   */
  private async withBlockers(issue: RestIssue, listed: Map<number, RestIssue>): Promise<TrackerIssue> {
    const repository = `${this.options.owner}/${this.options.repo}`;
    const summary = issue.issue_dependencies_summary;
    let blockers: TrackerIssue['blocked_by'] = [];
    if (summary && summary.total_blocked_by > 0) {
      const raw = await this.call(`read the dependencies of #${issue.number}`, () =>
        this.octokit.paginate(this.octokit.rest.issues.listDependenciesBlockedBy, {
          ...this.where,
          issue_number: issue.number,
          per_page: PER_PAGE,
        }),
      );
      blockers = raw.map((item) => blockerRef(parseIssue(item), repository, this.handoffLabel));
    } else if (!summary) {
      blockers = blockersInBody(issue.body ?? '').map((number) => {
        const known = listed.get(number);
        // a blocker not among the open issues listed is closed, gone or a pull request: state unknown
        return {
          id: String(number),
          identifier: `#${number}`,
          state: known ? stateOf(known, this.handoffLabel) : null,
        };
      });
    }
    return toTrackerIssue(issue, blockers, this.handoffLabel);
  }

  /** The `milestone` filter: a number, `*` or `none` as given, a title looked up once. */
  private async milestone(): Promise<string | undefined> {
    const wanted = this.options.milestone?.trim();
    if (!wanted || /^(\d+|\*|none)$/.test(wanted)) return wanted || undefined;
    if (this.milestoneNumber) return this.milestoneNumber;
    const all = await this.call('list the milestones', () =>
      this.octokit.paginate(this.octokit.rest.issues.listMilestones, {
        ...this.where,
        state: 'all',
        per_page: PER_PAGE,
      }),
    );
    const match =
      all.find((m) => m.title === wanted) ?? all.find((m) => m.title.toLowerCase() === wanted.toLowerCase());
    if (!match) {
      throw new TrackerError(
        'invalid',
        `github: ${this.source} has no milestone titled ${JSON.stringify(wanted)}`,
      );
    }
    this.milestoneNumber = String(match.number);
    return this.milestoneNumber;
  }

  private async call<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw githubError(error, what, { token: this.token.token, tokenSource: this.token.source });
    }
  }
}

/** An answer of the API is hostile input too: one that is no issue is one clear line. */
function parseIssue(item: unknown): RestIssue {
  const parsed = restIssue.safeParse(item);
  if (parsed.success) return parsed.data;
  const where = parsed.error.issues[0]?.path.join('.') || 'the answer';
  throw new TrackerError('invalid', `github: the API answered something that is not an issue (at ${where})`);
}

function issueNumber(id: string): number {
  if (!/^\d{1,9}$/.test(id))
    throw new TrackerError('invalid', `github: ${JSON.stringify(id.slice(0, 40))} is not an issue number`);
  return Number(id);
}

function checkRepository(owner: string, repo: string) {
  if (
    !/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/.test(owner) ||
    !/^[A-Za-z0-9._-]{1,100}$/.test(repo) ||
    /^\.+$/.test(repo)
  ) {
    throw new TrackerError(
      'invalid',
      `github: ${JSON.stringify(`${owner}/${repo}`)} is not an owner/repository`,
    );
  }
}

/**
 * The API URL without its trailing slash; https, or http on loopback only (tests, a local proxy),
 * so a token never crosses a network in clear.
 */
function checkedApiUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TrackerError('invalid', `github: the API URL ${JSON.stringify(value)} is not a URL`);
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new TrackerError(
      'invalid',
      `github: the API URL ${url.origin} must be https (the token would travel in clear)`,
    );
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new TrackerError(
      'invalid',
      'github: the API URL must be a plain base URL, without credentials, query or fragment',
    );
  }
  return url.href.replace(/\/+$/, '');
}

/** `work` over `items`, at most CONCURRENCY at once, results in the items' order. */
async function inBatches<T, R>(items: T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  return results;
}
