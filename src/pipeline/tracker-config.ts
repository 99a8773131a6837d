import { z } from 'zod';

/**
 * `tracker:` in .troupe/config.yaml: where `troupe watch` takes its work from and by which rules
 * (docs/trackers.md, "troupe watch"). Symphony's WORKFLOW.md fills the same `WatchConfig`
 * (app/watch/watch-config.ts).
 */

export type TrackerChoice =
  | {
      kind: 'github';
      owner: string;
      repo: string;
      api_url?: string;
      labels?: string[];
      milestone?: string;
      assignee?: string;
      claim_label?: string;
    }
  | { kind: 'linear'; project_slug: string; endpoint?: string; assignee?: string }
  | { kind: 'backlog'; path?: string; labels?: string[]; include_assigned?: boolean };

/** How `troupe watch` opens a pull request from a completed task's branch (docs/trackers.md). */
export interface PullRequestSetting {
  draft: boolean;
  /** null: the base the task's branch started from. */
  base: string | null;
  remote: string;
}

export interface WatchConfig {
  tracker: TrackerChoice;
  /** null: the tracker's own (GitHub `open`; Linear Symphony's; backlog every status but the last). */
  active_states: string[] | null;
  terminal_states: string[] | null;
  /** Where a completed task's issue goes; null: the tracker's own (backlog: its last status; GitHub: closed). */
  handoff_state: string | null;
  /** Label → pipeline name. */
  pipelines: Record<string, string>;
  /** null: the project's `default_pipeline`. */
  default_pipeline: string | null;
  polling: { interval_ms: number };
  concurrency: { max: number; per_state: Record<string, number> };
  max_retries: number;
  retry_backoff_ms: number;
  max_retry_backoff_ms: number;
  /** ≤ 0: no stall detection. */
  stall_timeout_ms: number;
  /** A pull request before the hand-off; null: none, the task merges as its pipeline says. */
  pull_request: PullRequestSetting | null;
}

export const WATCH_DEFAULTS = {
  interval_ms: 30_000,
  max_concurrent: 10,
  max_retries: 3,
  retry_backoff_ms: 10_000,
  max_retry_backoff_ms: 300_000,
  stall_timeout_ms: 300_000,
} as const;

const names = z.array(z.string().trim().min(1)).min(1);
const ms = z.number().int().positive();

const common = {
  active_states: names.optional(),
  terminal_states: names.optional(),
  handoff_state: z.string().trim().min(1).optional(),
  pipelines: z.record(z.string().min(1), z.string().min(1)).optional(),
  default_pipeline: z.string().min(1).optional(),
  polling: z.strictObject({ interval_ms: ms.min(100) }).optional(),
  concurrency: z
    .strictObject({ max: ms.optional(), per_state: z.record(z.string().min(1), ms).optional() })
    .optional(),
  max_retries: z.number().int().nonnegative().optional(),
  retry_backoff_ms: ms.optional(),
  max_retry_backoff_ms: ms.optional(),
  stall_timeout_ms: z.number().int().optional(),
  pull_request: z
    .union([
      z.boolean(),
      z.strictObject({
        draft: z.boolean().optional(),
        base: z.string().trim().min(1).optional(),
        remote: z
          .string()
          .regex(/^[^\s-][^\s]*$/, {
            error: 'a git remote is a remote name (origin) or a URL, without spaces and not starting with -',
          })
          .optional(),
      }),
    ])
    .optional(),
};

export const TrackerConfigSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('github'),
    owner: z.string().min(1),
    repo: z.string().min(1),
    api_url: z.string().url().optional(),
    labels: names.optional(),
    milestone: z.union([z.string().min(1), z.number().int().positive()]).optional(),
    assignee: z.string().min(1).optional(),
    claim_label: z.string().min(1).optional(),
    ...common,
  }),
  z.strictObject({
    kind: z.literal('linear'),
    project_slug: z.string().min(1),
    endpoint: z.string().url().optional(),
    /** Only issues assigned to this Linear user id, or `me` (the API key's user): Symphony's `tracker.assignee`. */
    assignee: z.string().trim().min(1).max(200).optional(),
    ...common,
  }),
  z.strictObject({
    kind: z.literal('backlog'),
    path: z.string().min(1).optional(),
    labels: names.optional(),
    include_assigned: z.boolean().optional(),
    ...common,
  }),
]);

export type RawTrackerConfig = z.infer<typeof TrackerConfigSchema>;

/** The checked `tracker:` with its defaults. */
export function watchConfigOf(raw: RawTrackerConfig): WatchConfig {
  const {
    active_states,
    terminal_states,
    handoff_state,
    pipelines,
    default_pipeline,
    polling,
    concurrency,
    max_retries,
    retry_backoff_ms,
    max_retry_backoff_ms,
    stall_timeout_ms,
    pull_request,
    ...choice
  } = raw;
  const tracker = (
    'milestone' in choice && typeof choice.milestone === 'number'
      ? { ...choice, milestone: String(choice.milestone) }
      : choice
  ) as TrackerChoice;
  return {
    tracker,
    active_states: active_states ?? null,
    terminal_states: terminal_states ?? null,
    handoff_state: handoff_state ?? null,
    pipelines: Object.fromEntries(Object.entries(pipelines ?? {}).map(([l, p]) => [l.toLowerCase(), p])),
    default_pipeline: default_pipeline ?? null,
    polling: { interval_ms: polling?.interval_ms ?? WATCH_DEFAULTS.interval_ms },
    concurrency: {
      max: concurrency?.max ?? WATCH_DEFAULTS.max_concurrent,
      per_state: concurrency?.per_state ?? {},
    },
    max_retries: max_retries ?? WATCH_DEFAULTS.max_retries,
    retry_backoff_ms: retry_backoff_ms ?? WATCH_DEFAULTS.retry_backoff_ms,
    max_retry_backoff_ms: max_retry_backoff_ms ?? WATCH_DEFAULTS.max_retry_backoff_ms,
    stall_timeout_ms: stall_timeout_ms ?? WATCH_DEFAULTS.stall_timeout_ms,
    pull_request: pullRequestSetting(tracker.kind, pull_request),
  };
}

/**
 * `pull_request:` with its default: on for GitHub and Linear (their issues end at a pull request,
 * as Symphony's do), off for a local backlog (its tasks merge into base as their pipeline says).
 */
export function pullRequestSetting(
  kind: TrackerChoice['kind'],
  raw?: RawTrackerConfig['pull_request'],
): PullRequestSetting | null {
  const on = raw ?? kind !== 'backlog';
  if (on === false) return null;
  const given = on === true ? {} : on;
  return { draft: given.draft ?? false, base: given.base ?? null, remote: given.remote ?? 'origin' };
}
