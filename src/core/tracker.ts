import { TroupeError } from './errors.js';

/**
 * An issue tracker as a source of work (docs/trackers.md): GitHub Issues, Linear, or a local
 * Markdown backlog, each an adapter behind this one small port (src/trackers/). Issues are
 * hostile input: their text reaches prompts as data only.
 */

/** An issue as troupe reads it from any tracker (Symphony's issue model). */
export interface TrackerIssue {
  /** The tracker's own stable id (GitHub: the number; Linear: its uuid; backlog: the task id). */
  id: string;
  /** What people call it: `#12`, `ENG-42`, `task-7`. */
  identifier: string;
  title: string;
  description: string;
  /** 1 (urgent) to 4 (low); null: none. */
  priority: number | null;
  /** The tracker's own state name, as it writes it (`Todo`, `open`, `In Progress`). */
  state: string;
  /** Lower-cased. */
  labels: string[];
  /** Issues this one waits for, with their state when known. */
  blocked_by: Array<{ id: string; identifier: string; state: string | null }>;
  url: string | null;
  /** ISO times. */
  created_at: string | null;
  updated_at: string | null;
}

/** The issue a task works on, as its `task_created` records it (`troupe watch`). */
export interface TaskIssueRef {
  /** The tracker's `source` (`github:owner/repo`, `linear:slug`, `backlog:/path`). */
  source: string;
  id: string;
  identifier: string;
  url: string | null;
  /** The issue's state when the task started. */
  state: string;
}

export interface Tracker {
  /** Where the issues come from, e.g. `github:owner/repo`, `linear:project-slug`, `backlog:/path/backlog`. */
  readonly source: string;
  /** Issues in the active states that match the configured selection (labels, milestone, assignee…). */
  candidates(): Promise<TrackerIssue[]>;
  /** The current state of these issues; null for one that is gone or out of reach. */
  states(ids: readonly string[]): Promise<Map<string, string | null>>;
  /** Marks the issue as taken by `by` where the tracker shows it (an assignee, a label, a status). */
  claim(id: string, by: string): Promise<void>;
  /** Undoes `claim`. */
  release(id: string, by: string): Promise<void>;
  /** Posts a comment, or replaces the text of `commentId` (troupe's one progress comment); returns its id. */
  upsertComment(id: string, body: string, commentId: string | null): Promise<string>;
  /** Links a pull request to the issue. */
  linkPullRequest(id: string, url: string): Promise<void>;
  /** Moves the issue to `state` (a state name of this tracker). */
  moveTo(id: string, state: string): Promise<void>;
}

/** How a tracker call failed: a scheduling state for `rate_limited`, as for model providers. */
export type TrackerErrorKind = 'auth' | 'rate_limited' | 'unreachable' | 'not_found' | 'invalid';

export class TrackerError extends TroupeError {
  readonly code = 'tracker_error';
  constructor(
    readonly kind: TrackerErrorKind,
    message: string,
    options: { hint?: string; cause?: unknown; resetAt?: string } = {},
  ) {
    super(message, options);
    this.resetAt = options.resetAt ?? null;
  }

  /** `rate_limited`: when the tracker says its limit resets (ISO), if it says. */
  readonly resetAt: string | null;
}
