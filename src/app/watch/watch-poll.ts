import { messageOf } from '../../core/errors.js';
import { currentHolder, type EventStore, type IssueClaim } from '../../core/event-store.js';
import type { Pipeline } from '../../core/pipeline.js';
import type { Script } from '../../core/script.js';
import { TrackerError, type TrackerIssue } from '../../core/tracker.js';
import type { TaskService } from '../../engine/task-service.js';
import {
  type HeldIssue,
  type IssuePolicy,
  normalizeState,
  type Selection,
  selectIssues,
} from '../../scheduler/issue-queue.js';
import { BackoffLog } from '../backoff-log.js';
import { pipelineForWatch } from './issue-handoff.js';
import { issueInput, issueRef } from './issue-input.js';
import type { OpenedTracker } from './open-tracker.js';
import type { WatchSetup } from './watch-config.js';
import type { WorkflowHooks } from './workflow-hooks.js';

/** What one watcher works with: the project's tasks and store, the tracker, the rules. */
export interface WatchContext {
  tasks: TaskService;
  store: EventStore;
  opened: OpenedTracker;
  setup: WatchSetup;
  policy: IssuePolicy;
  pipeline: (name: string) => Pipeline;
  /** WORKFLOW.md's hooks around each attempt of an issue's task; null without them. */
  hooks?: WorkflowHooks | null;
  /** `--script`: every agent on the scripted runtime (offline). */
  script: Script | null;
  /** This watcher's name where the tracker shows a claim. */
  by: string;
  now: () => Date;
  /** One line on stderr. */
  warn: (line: string) => void;
  /** A tracker call that failed: one line, backed off per kind of failure (trackerFailures). */
  failed: (what: string, error: unknown) => void;
}

/**
 * How a watcher reports tracker failures: a token revoked or a tracker away fails every call of
 * every poll, so each kind (auth, unreachable, …) is one line, then backed off (BackoffLog).
 */
export function trackerFailures(write: (line: string) => void): WatchContext['failed'] {
  const log = new BackoffLog(write);
  return (what, error) => {
    const kind =
      error instanceof TrackerError ? `tracker ${error.kind}` : messageOf(error).replace(/\d+/g, '#');
    log.report(kind, `troupe watch: ${what}: ${messageOf(error)}`);
  };
}

export interface Started {
  issue: TrackerIssue;
  taskId: string;
  /** Null for a new task; the try number of a retry. */
  attempt: number | null;
}

export interface PollResult {
  selection: Selection;
  started: Started[];
}

/** The issues this tracker's claims hold, with their tasks' status. */
export function heldIssues(ctx: WatchContext): Array<HeldIssue & { claim: IssueClaim }> {
  return ctx.store.issueClaims(ctx.opened.tracker.source).map((claim) => {
    const task = claim.taskId ? ctx.store.task(claim.taskId) : undefined;
    const state = claim.taskId ? (ctx.tasks.state(claim.taskId).issue?.state ?? null) : null;
    return {
      claim,
      issueId: claim.issueId,
      taskId: claim.taskId,
      taskStatus: task?.status ?? null,
      state,
      attempts: claim.attempts,
      retryAt: claim.retryAt,
    };
  });
}

/** Reads the candidates, decides, and (unless `dryRun`) claims and creates a task for each issue chosen. */
export async function pollOnce(ctx: WatchContext, options: { dryRun: boolean }): Promise<PollResult> {
  const candidates = await ctx.opened.tracker.candidates();
  const selection = selectIssues(candidates, heldIssues(ctx), ctx.policy, ctx.now());
  if (options.dryRun) return { selection, started: [] };
  const started: Started[] = [];
  for (const chosen of selection.start) {
    const outcome = chosen.retryOf
      ? (retakeOrWhyNot(ctx, chosen.issue.id, chosen.retryOf.taskId) ?? {
          issue: chosen.issue,
          taskId: chosen.retryOf.taskId,
          attempt: chosen.retryOf.attempt,
        })
      : startNew(ctx, chosen.issue, chosen.pipeline);
    if (typeof outcome === 'string') selection.skipped.push({ issue: chosen.issue, reason: outcome });
    else started.push(outcome);
  }
  selection.start = selection.start.filter((s) => started.some((t) => t.issue.id === s.issue.id));
  for (const { issue } of started) {
    try {
      await ctx.opened.tracker.claim(issue.id, ctx.by);
    } catch (error) {
      ctx.failed(`${issue.identifier} not marked as taken`, error);
    }
  }
  return { selection, started };
}

/** A new task for the issue, once its claim is ours: the reason it is not started otherwise. */
function startNew(ctx: WatchContext, issue: TrackerIssue, pipelineName: string): Started | string {
  const source = ctx.opened.tracker.source;
  const claim = ctx.store.claimIssue(source, issue.id, ctx.now());
  if (!claim) return 'claimed by another watcher';
  try {
    const workflow = ctx.setup.workflow;
    const taskId = startIssueTask(ctx, issue, {
      pipeline: pipelineForWatch(
        workflow ? workflow.pipeline : ctx.pipeline(pipelineName),
        ctx.setup.config.pull_request,
        ctx.tasks.root,
      ),
      attempt: null,
      cwd: ctx.tasks.root,
    });
    return { issue, taskId, attempt: null };
  } catch (error) {
    ctx.store.releaseIssue(source, issue.id);
    return `not started: ${messageOf(error)}`;
  }
}

/**
 * A task for the issue (its input rendered with `attempt`), held by this process from its first
 * moment (another watcher's reconcile resumes only a task no live process holds), and the issue's
 * claim pointed at it.
 */
export function startIssueTask(
  ctx: WatchContext,
  issue: TrackerIssue,
  options: { pipeline: Pipeline; attempt: number | null; cwd: string; parentTaskId?: string },
): string {
  const source = ctx.opened.tracker.source;
  const taskId = ctx.tasks.start({
    pipeline: options.pipeline,
    input: issueInput(issue, options.attempt, ctx.setup.workflow?.workflow ?? null),
    issue: issueRef(source, issue),
    script: ctx.script,
    cwd: options.cwd,
    ...(options.parentTaskId ? { parentTaskId: options.parentTaskId } : {}),
  });
  ctx.store.tryLease(taskId, currentHolder());
  ctx.store.updateIssueClaim(source, issue.id, { taskId });
  return taskId;
}

/** A failed or stalled task's retry, taken by one watcher (the claim's retry time is compared and cleared); null, or why not. */
export function retakeOrWhyNot(ctx: WatchContext, issueId: string, taskId: string): string | null {
  const source = ctx.opened.tracker.source;
  const claim = ctx.store.issueClaims(source).find((c) => c.issueId === issueId);
  if (!claim || !ctx.store.updateIssueClaim(source, issueId, { retryAt: null }, claim.retryAt)) {
    return 'its retry was taken by another watcher';
  }
  try {
    if (ctx.tasks.state(taskId).status === 'failed') ctx.tasks.restart(taskId);
    if (!ctx.store.tryLease(taskId, currentHolder())) return `task ${taskId} is running elsewhere`;
    return null;
  } catch (error) {
    return `retry not started: ${messageOf(error)}`;
  }
}

/** Whether `state` is one work is taken from. */
export function isActiveState(ctx: WatchContext, state: string | null): boolean {
  return state !== null && inStates(ctx.policy.activeStates, state) && !isTerminalState(ctx, state);
}

/** Whether `state` is one of the terminal states (a workspace is cleaned, not only stopped). */
export function isTerminalState(ctx: WatchContext, state: string | null): boolean {
  return state !== null && inStates(ctx.policy.terminalStates, state);
}

function inStates(states: readonly string[], state: string): boolean {
  const s = normalizeState(state);
  return states.some((x) => normalizeState(x) === s);
}
