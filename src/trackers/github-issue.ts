import { z } from 'zod';
import type { TrackerIssue } from '../core/tracker.js';

/**
 * A GitHub REST issue (docs/trackers.md, "GitHub Issues") read into troupe's issue: only the
 * fields troupe relies on are checked (test/fixtures/github-api/ records their shapes); the rest
 * of the API's answer is ignored. Pure: the adapter (github.ts) does the calls.
 */

const label = z.union([z.string(), z.object({ name: z.string().nullish() }).loose()]);

export const restIssue = z
  .object({
    number: z.number().int().positive(),
    title: z.string(),
    body: z.string().nullish(),
    state: z.string(),
    labels: z.array(label).default([]),
    html_url: z.string().nullish(),
    repository_url: z.string().nullish(),
    created_at: z.string().nullish(),
    updated_at: z.string().nullish(),
    /** Present on pull requests only: the issues API lists them too. */
    pull_request: z.unknown().optional(),
    /** Present where GitHub has issue dependencies (github.com, GHES 3.19+). */
    issue_dependencies_summary: z.object({ total_blocked_by: z.number() }).loose().nullish(),
  })
  .loose();

export type RestIssue = z.infer<typeof restIssue>;

export const isPullRequest = (issue: RestIssue) => issue.pull_request != null;

export const labelNames = (issue: RestIssue): string[] =>
  issue.labels
    .map((l) => (typeof l === 'string' ? l : (l.name ?? '')))
    .filter((name) => name !== '')
    .map((name) => name.toLowerCase());

/** `open`, `closed`, or the hand-off label an open issue carries (what `moveTo` set). */
export function stateOf(issue: RestIssue, handoffLabel: string | null): string {
  if (issue.state === 'closed') return 'closed';
  if (handoffLabel && labelNames(issue).includes(handoffLabel.toLowerCase())) return handoffLabel;
  return issue.state;
}

const PRIORITY_WORDS: Record<string, number> = {
  urgent: 1,
  critical: 1,
  high: 2,
  medium: 3,
  normal: 3,
  low: 4,
};

/**
 * The priority its labels give: `priority: 1`, `priority/2`, `priority-3`, `p1`, `P2` (0 counts
 * as 1, the most urgent), or `priority: urgent|critical|high|medium|normal|low`; the most urgent
 * when several match; null when none does.
 */
export function priorityOf(labels: readonly string[]): number | null {
  let best: number | null = null;
  for (const name of labels) {
    const m = /^(?:priority\s*[:/_-]?\s*|p)([0-4]|[a-z]+)$/i.exec(name.trim());
    if (!m) continue;
    const value = /^\d$/.test(m[1]!) ? Math.max(1, Number(m[1])) : PRIORITY_WORDS[m[1]!.toLowerCase()];
    if (value !== undefined && (best === null || value < best)) best = value;
  }
  return best;
}

/**
 * Issue numbers named by `blocked by #N` / `depends on #N` lines of a body: the fallback where
 * the API has no issue dependencies (older GitHub Enterprise Server). Several numbers may follow
 * one phrase (`depends on #3, #4 and #5`).
 */
export function blockersInBody(body: string): number[] {
  const found = new Set<number>();
  for (const line of body.split('\n')) {
    const m = /^\W*(?:blocked\s+by|depends\s+on)\b:?\s*(.*)$/i.exec(line.trim());
    if (!m) continue;
    for (const ref of m[1]!.matchAll(/(?:^|[\s,(])#(\d{1,9})\b/g)) found.add(Number(ref[1]));
  }
  return [...found];
}

/** `owner/repo` of an issue from its `repository_url` (`…/repos/owner/repo`), lower-cased. */
export function repositoryOf(issue: RestIssue): string | null {
  const m = /\/repos\/([^/]+)\/([^/]+)\/?$/.exec(issue.repository_url ?? '');
  return m ? `${m[1]}/${m[2]}`.toLowerCase() : null;
}

/**
 * A blocker as the port shows it: an issue of this repository by its number (`#N`), one of
 * another repository (GitHub allows cross-repository dependencies) as `owner/repo#N`.
 */
export function blockerRef(issue: RestIssue, repository: string, handoffLabel: string | null) {
  const other = repositoryOf(issue);
  const id = other && other !== repository.toLowerCase() ? `${other}#${issue.number}` : String(issue.number);
  return { id, identifier: id.includes('#') ? id : `#${id}`, state: stateOf(issue, handoffLabel) };
}

export function toTrackerIssue(
  issue: RestIssue,
  blockedBy: TrackerIssue['blocked_by'],
  handoffLabel: string | null,
): TrackerIssue {
  const labels = labelNames(issue);
  return {
    id: String(issue.number),
    identifier: `#${issue.number}`,
    title: issue.title,
    description: issue.body ?? '',
    priority: priorityOf(labels),
    state: stateOf(issue, handoffLabel),
    labels,
    blocked_by: blockedBy,
    url: issue.html_url ?? null,
    created_at: issue.created_at ?? null,
    updated_at: issue.updated_at ?? null,
  };
}
