import type { IssueClaim } from '../../core/event-store.js';
import type { Pipeline } from '../../core/pipeline.js';
import type { TaskState } from '../../engine/fold/task-state.js';
import { startIssueTask, type WatchContext } from './watch-poll.js';

/**
 * WORKFLOW.md's `agent.max_turns` under `troupe watch --workflow` (docs/trackers.md): a task that
 * completes while its issue is still active is followed, 1 s later (Symphony's continuation
 * delay), by another turn: a new task, linked to the previous one (`parentTaskId`), on a branch
 * started from the previous turn's branch, so it works on the code the previous turn left. Its
 * prompt is rendered with `attempt` one higher. The turns of an issue are the chain of those
 * tasks in the event log (counted there, so a restarted watcher counts the same); the issue's
 * claim points at the current one.
 */
export const CONTINUATION_DELAY_MS = 1000;

/** The issue's turns up to this task, first to last: this task and the tasks it continued. */
export function turnsOf(ctx: WatchContext, taskId: string): TaskState[] {
  const turns: TaskState[] = [];
  const issueId = ctx.tasks.state(taskId).issue?.id;
  for (let id: string | null = taskId; id !== null && ctx.store.task(id); ) {
    const state = ctx.tasks.state(id);
    if (state.issue?.id !== issueId || turns.some((t) => t.id === id)) break;
    turns.unshift(state);
    id = state.parentTaskId;
  }
  return turns;
}

/** The turns an issue may take in a row; null without a WORKFLOW.md (one task per issue). */
export function maxTurns(ctx: WatchContext): number | null {
  return ctx.setup.workflow?.workflow.settings.agent.max_turns ?? null;
}

/** Whether the completed task of this claim is to be followed by another turn now (its issue active). */
export function turnDue(ctx: WatchContext, claim: IssueClaim): boolean {
  const max = maxTurns(ctx);
  if (max === null || claim.taskId === null) return false;
  if (claim.retryAt !== null && Date.parse(claim.retryAt) > ctx.now().getTime()) return false;
  return turnsOf(ctx, claim.taskId).length < max;
}

/**
 * The issue's next turn after its completed task `taskId`, once this watcher took it (the claim's
 * continuation time compared and cleared, as a retry is): the new task's id, held by this
 * process, or why there is none (`candidate: false` when the issue is no longer one to work on).
 */
export async function startNextTurn(
  ctx: WatchContext,
  issueId: string,
  taskId: string,
): Promise<{ taskId: string } | { why: string; candidate: boolean }> {
  const source = ctx.opened.tracker.source;
  const claim = ctx.store.issueClaims(source).find((c) => c.issueId === issueId);
  if (claim?.taskId !== taskId) return { why: 'its claim moved on', candidate: true };
  if (!ctx.store.updateIssueClaim(source, issueId, { retryAt: null }, claim.retryAt)) {
    return { why: 'its next turn was taken by another watcher', candidate: true };
  }
  // as Symphony's continuation: the issue read again, and worked on only while it is a candidate
  const issue = (await ctx.opened.tracker.candidates()).find((i) => i.id === issueId);
  if (!issue) return { why: 'no longer a candidate', candidate: false };
  const previous = ctx.tasks.state(taskId);
  const turn = turnsOf(ctx, taskId).length + 1;
  const next = startIssueTask(ctx, issue, {
    pipeline: onBranchOf(previous),
    attempt: turn - 1,
    cwd: previous.cwd,
    parentTaskId: taskId,
  });
  return { taskId: next };
}

/** The previous turn's pipeline, its worktree's branch started from the previous turn's branch. */
function onBranchOf(previous: TaskState): Pipeline {
  const branch = previous.workspace?.branch;
  const workspace = previous.definition.workspace;
  if (!branch || !workspace || workspace.isolation !== 'worktree') return previous.definition;
  return { ...previous.definition, workspace: { ...workspace, base: branch } };
}

/** Where the issue's work started (the first turn's base): what its pull request proposes to change. */
export function issueBase(ctx: WatchContext, taskId: string): string | null {
  const turns = turnsOf(ctx, taskId);
  return turns.length > 1 ? (turns[0]!.workspace?.base ?? null) : null;
}
