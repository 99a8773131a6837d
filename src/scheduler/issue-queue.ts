import { isTerminal, type TaskStatus } from '../core/events.js';
import type { TrackerIssue } from '../core/tracker.js';

/**
 * Which tracker issues `troupe watch` starts now, and why the others wait (Symphony's dispatch
 * rules, SPEC §8): pure, so a poll's decision is one function call on plain objects.
 */

/** The rules a poll decides by (`tracker:` in .troupe/config.yaml, or WORKFLOW.md). */
export interface IssuePolicy {
  /** As the tracker writes them; compared trimmed and lower-cased. */
  activeStates: readonly string[];
  terminalStates: readonly string[];
  /** Label (lower-cased) → pipeline name; the first label of this map an issue carries wins. */
  pipelines: Readonly<Record<string, string>>;
  /** For an issue with none of those labels; null: such an issue is not taken. */
  defaultPipeline: string | null;
  concurrency: { max: number; perState: Readonly<Record<string, number>> };
  /** Labels every issue must carry (WORKFLOW.md `tracker.required_labels`); compared without case or spaces. */
  requiredLabels?: readonly string[];
}

/** An issue held in the store (`EventStore.claimIssue`), with its task's status when it has one. */
export interface HeldIssue {
  issueId: string;
  taskId: string | null;
  taskStatus: TaskStatus | null;
  /** The issue's state when its task started (for the per-state counts when it is no candidate now). */
  state: string | null;
  attempts: number;
  /** A failed task's next try (ISO); null: none planned. */
  retryAt: string | null;
}

export interface IssueToStart {
  issue: TrackerIssue;
  pipeline: string;
  /** Null for a new task; the try number (2, 3 …) when a failed task's retry is due. */
  retryOf: { taskId: string; attempt: number } | null;
}

export interface Selection {
  start: IssueToStart[];
  skipped: Array<{ issue: TrackerIssue; reason: string }>;
}

export const normalizeState = (state: string): string => state.trim().toLowerCase();
const labelKey = (label: string): string => label.replace(/\s+/g, '').toLowerCase();

/** Symphony's order: priority 1 first (none last), then the oldest, then the identifier. */
export function byDispatchOrder(a: TrackerIssue, b: TrackerIssue): number {
  const pa = a.priority ?? Number.POSITIVE_INFINITY;
  const pb = b.priority ?? Number.POSITIVE_INFINITY;
  if (pa !== pb) return pa < pb ? -1 : 1;
  const ca = a.created_at ?? '\uffff';
  const cb = b.created_at ?? '\uffff';
  if (ca !== cb) return ca < cb ? -1 : 1;
  return a.identifier < b.identifier ? -1 : a.identifier > b.identifier ? 1 : 0;
}

/**
 * A task that still holds a slot: being started, running, waiting, or completed with its issue's
 * next turn to come (WORKFLOW.md's max_turns); one waiting for its retry does not.
 */
export function holdsSlot(held: HeldIssue): boolean {
  if (held.taskId === null) return true; // being started right now
  if (held.taskStatus === 'completed' && held.retryAt !== null) return true;
  return held.retryAt === null && held.taskStatus !== null && !isTerminal(held.taskStatus);
}

export function pipelineFor(issue: TrackerIssue, policy: IssuePolicy): string | null {
  for (const [label, pipeline] of Object.entries(policy.pipelines)) {
    if (issue.labels.includes(label.toLowerCase())) return pipeline;
  }
  return policy.defaultPipeline;
}

/** Backoff before try `attempt + 1` after `attempt` failed: 10 s · 2^(attempt−1), at most `maxMs`. */
export function retryDelayMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(baseMs * 2 ** Math.max(0, attempt - 1), maxMs);
}

export function selectIssues(
  candidates: readonly TrackerIssue[],
  held: readonly HeldIssue[],
  policy: IssuePolicy,
  now: Date,
): Selection {
  const active = new Set(policy.activeStates.map(normalizeState));
  const terminal = new Set(policy.terminalStates.map(normalizeState));
  const heldById = new Map(held.map((h) => [h.issueId, h]));
  const stateOf = new Map(candidates.map((c) => [c.id, normalizeState(c.state)]));
  let busy = 0;
  const busyIn = new Map<string, number>();
  const take = (state: string) => {
    busy++;
    busyIn.set(state, (busyIn.get(state) ?? 0) + 1);
  };
  for (const h of held) {
    if (holdsSlot(h)) take(stateOf.get(h.issueId) ?? normalizeState(h.state ?? ''));
  }
  const perState = new Map(
    Object.entries(policy.concurrency.perState).map(([s, n]) => [normalizeState(s), n]),
  );
  const selection: Selection = { start: [], skipped: [] };
  const skip = (issue: TrackerIssue, reason: string) => selection.skipped.push({ issue, reason });

  for (const issue of [...candidates].sort(byDispatchOrder)) {
    const state = normalizeState(issue.state);
    if (terminal.has(state) || !active.has(state)) {
      skip(issue, `state "${issue.state}" is not active`);
      continue;
    }
    const missing = (policy.requiredLabels ?? []).find(
      (label) => !issue.labels.some((l) => labelKey(l) === labelKey(label)),
    );
    if (missing !== undefined) {
      skip(issue, `no label "${missing}"`);
      continue;
    }
    const claim = heldById.get(issue.id);
    let retryOf: IssueToStart['retryOf'] = null;
    if (claim) {
      // a retry: of a failed task, or of a stalled one (ended, its status left as it was)
      const due = claim.retryAt !== null && !['completed', 'cancelled'].includes(claim.taskStatus ?? '');
      if (!due || claim.taskId === null) {
        skip(issue, claimReason(claim));
        continue;
      }
      const wait = Date.parse(claim.retryAt!) - now.getTime();
      if (wait > 0) {
        skip(issue, `retry in ${Math.ceil(wait / 1000)} s (task ${claim.taskId}, try ${claim.attempts + 1})`);
        continue;
      }
      retryOf = { taskId: claim.taskId, attempt: claim.attempts + 1 };
    }
    const blocker = issue.blocked_by.find((b) => b.state === null || !terminal.has(normalizeState(b.state)));
    if (blocker) {
      skip(issue, `blocked by ${blocker.identifier} (${blocker.state ?? 'unknown'})`);
      continue;
    }
    const pipeline = pipelineFor(issue, policy);
    if (pipeline === null) {
      skip(issue, `no pipeline for labels (${issue.labels.join(', ') || 'none'})`);
      continue;
    }
    if (busy >= policy.concurrency.max) {
      skip(issue, `concurrency: ${busy} of ${policy.concurrency.max} running`);
      continue;
    }
    const cap = perState.get(state);
    if (cap !== undefined && (busyIn.get(state) ?? 0) >= cap) {
      skip(issue, `concurrency: ${busyIn.get(state) ?? 0} of ${cap} in "${issue.state}"`);
      continue;
    }
    take(state);
    selection.start.push({ issue, pipeline, retryOf });
  }
  return selection;
}

function claimReason(claim: HeldIssue): string {
  if (claim.taskId === null) return 'claimed: its task is being started';
  if (claim.taskStatus === 'completed' && claim.retryAt !== null)
    return `next turn after task ${claim.taskId}`;
  const status = claim.taskStatus ?? 'unknown';
  if (status === 'failed') return `gave up after ${claim.attempts} tries (task ${claim.taskId})`;
  return `claimed by task ${claim.taskId} (${status})`;
}
