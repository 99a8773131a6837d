import type { EventStore } from '../core/event-store.js';
import { isTerminal, type TaskStatus } from '../core/events.js';
import { printable } from '../core/printable.js';
import type { TaskIssueRef } from '../core/tracker.js';
import type { Usage } from '../core/usage.js';
import { mailboxWaits, type TaskState, waitingFor } from '../engine/fold/task-state.js';
import type { PieceDiffs } from './piece-diffs.js';
import { planView } from './plan-view.js';

/** The process that runs a task under its lease; `alive: false` when it is gone (killed, or its lease expired). */
export interface TaskOwner {
  pid: number;
  host: string;
  alive: boolean;
}

/** Who runs a task that has not ended: its lease's holder, dead or alive; null when none holds it. */
export function taskOwner(store: EventStore, taskId: string, status: TaskStatus): TaskOwner | null {
  if (isTerminal(status)) return null;
  const lease = store.lease(taskId);
  return lease && { pid: lease.holder.pid, host: lease.holder.host, alive: lease.alive };
}

/** What to do about a task whose owner is gone; null while it lives, or when none owns it. */
export function ownerGoneHint(taskId: string, owner: TaskOwner | null): string | null {
  if (!owner || owner.alive) return null;
  return `process ${owner.pid} on host ${owner.host} is gone — troupe resume ${taskId}`;
}

/**
 * The one JSON shape of a task that `run --json` and `status --json` print; `owner` as
 * `taskOwner` reads it (a task's hint says what to do when its owner is gone), `noWorker` as
 * app/worker-wait.ts's `noWorkerReason` says; `plan` as app/plan-view.ts builds it, with the
 * pieces' diffs where the caller read them (app/piece-diffs.ts).
 */
export function taskJson(
  state: TaskState,
  owner: TaskOwner | null = null,
  noWorker: string | null = null,
  diffs?: PieceDiffs,
) {
  return {
    id: state.id,
    status: state.status,
    pipeline: state.pipeline,
    input: state.input,
    created: state.createdAt,
    updated: state.updatedAt,
    stages: state.stages.map((s) => ({
      n: s.n,
      agent: s.agent,
      status: s.gateWaiting ? ('awaiting_gate' as const) : s.status,
      input: s.input,
      output: s.output,
      gate: s.gate
        ? { decision: s.gate.decision, reason: s.gate.reason, by: s.gate.by, from: s.gate.from ?? null }
        : null,
      usage: s.usage,
      attempt: s.attempt,
      duration_ms: s.durationMs,
      error: s.error,
      warnings: s.warnings,
      route: state.routes[s.n] ?? null,
    })),
    size: state.size,
    spec: state.spec,
    workspace: workspaceView(state),
    waiting: waitingFor(state),
    /** Mailbox agents' stages waiting for their reply on the bus. */
    mailbox: mailboxWaits(state).map((w) => ({
      agent: w.agent,
      stage: w.stage,
      handle: w.handle,
      thread: w.thread,
      asked_at: w.askedAt,
      deadline: w.deadline,
    })),
    /** Mail the task wrote that was not delivered, oldest first. */
    mail_failed: state.mailFailures.map((f) => ({ ...f })),
    error: state.failure?.reason ?? null,
    /** Parked after its wake-ups kept failing: the last error, how many, when; null otherwise. */
    parked: state.parked,
    hint: state.failure?.hint ?? ownerGoneHint(state.id, owner),
    owner,
    /** Why no worker of the queue takes the task (none running, none serving its runtime). */
    no_worker: noWorker,
    parent: state.parentTaskId,
    /** The tracker issue the task works on (`troupe watch`); null when none. */
    issue: state.issue,
    usage: state.usage,
    /** The planner's plan as a graph, once one expanded (docs/task-graphs.md); null otherwise. */
    plan: planView(state, diffs),
  };
}

export function formatTokens(usage: {
  input_tokens: number;
  output_tokens: number;
  unknown?: boolean;
}): string {
  if (usage.unknown) return '? tok';
  const total = usage.input_tokens + usage.output_tokens;
  return total >= 1000 ? `${(total / 1000).toFixed(1)}k tok` : `${total} tok`;
}

/**
 * The cost in USD, `$0.0123`, as the runtime reported it or troupe estimated it from its prices
 * at each stage's end (scheduler/prices.ts); `(estimated)` after it when asked and any part of it
 * is troupe's estimate; null when unknown.
 */
export function formatCost(usage: Usage, sayEstimated = false): string | null {
  if (!usage.cost_usd) return null;
  const cost = `$${usage.cost_usd.toFixed(4)}`;
  return sayEstimated && usage.cost_estimated ? `${cost} (estimated)` : cost;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  return `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`;
}

/** The task's failure hint when no stage's error shows it already (`troupe status`, `run`). */
export function taskOwnHint(state: TaskState): string | null {
  const failure = state.failure;
  if (!failure?.hint) return null;
  const stageHint = failure.stage === null ? undefined : state.stages[failure.stage - 1]?.error?.hint;
  return failure.hint === stageHint ? null : failure.hint;
}

/** `troupe status`'s issue line, `issue: #12 open https://…` (none for a task without one). */
export function issueLines(state: TaskState): string[] {
  const { issue } = state;
  if (!issue) return [];
  // the tracker wrote every part of it: each made safe to print
  return [
    `  issue: ${[issue.identifier, issue.state, issue.url ?? ''].map(printable).filter(Boolean).join(' ')}`,
  ];
}

/** The issue as a row of `troupe list` names it: its identifier, safe to print, at most 20 characters. */
export function issueTag(issue: TaskIssueRef): string {
  const identifier = printable(issue.identifier);
  return identifier.length > 20 ? `${identifier.slice(0, 19)}…` : identifier;
}

/** `troupe status`'s lines for mail the task wrote that was not delivered. */
export function mailFailureLines(state: TaskState): string[] {
  return state.mailFailures.map(
    (f) => `  mail to ${f.to} not delivered (${f.kind}: ${f.subject}): ${f.reason.split('\n')[0]}`,
  );
}

/** `troupe status`'s lines for the task's size and spec (none when neither is known). */
export function sizeAndSpecLines(state: TaskState): string[] {
  const out: string[] = [];
  if (state.size) out.push(`  size: ${state.size.size} (set by ${state.size.by})`);
  const recorded = state.spec;
  if (recorded) {
    const { requirements, files, verification } = recorded.spec;
    out.push(`  spec (stage ${recorded.stage}, ${recorded.agent}):`);
    for (const r of requirements) out.push(`    requirement: ${r}`);
    if (files.length > 0) out.push(`    files: ${files.join(', ')}`);
    for (const v of verification) out.push(`    verify: ${v}`);
  }
  return out;
}

/**
 * Where the task works and why: the worktree the pipeline asked for, or the default it chose
 * when it started (pipeline/isolation.ts). `why` is null for a task from before the default.
 */
export function workspaceView(state: TaskState) {
  const written = state.definition.workspace;
  const why = state.isolation
    ? `default: ${state.isolation.reason}`
    : written
      ? `workspace.isolation: ${written.isolation}`
      : null;
  const w = state.workspace;
  return w
    ? {
        isolation: 'worktree' as const,
        why,
        path: w.path,
        branch: w.branch,
        base: w.base,
        merged: w.merged,
        unmerged: w.notMerged ?? null,
        removed: w.removed ?? false,
      }
    : {
        isolation: 'none' as const,
        why,
        path: null,
        branch: null,
        base: null,
        merged: null,
        unmerged: null,
        removed: false,
      };
}

/** `troupe status`'s workspace lines (none for a task that ran in place before the default). */
export function workspaceLines(state: TaskState): string[] {
  const view = workspaceView(state);
  if (view.isolation === 'none') return view.why ? [`  workspace: in place (${view.why})`] : [];
  return [
    `  workspace: worktree ${view.branch} at ${view.path}${view.why ? ` (${view.why})` : ''}`,
    ...(view.merged
      ? [
          `  merged into ${view.base} (${view.merged.slice(0, 12)})${view.removed ? '; worktree and branch removed' : ''}`,
        ]
      : []),
    ...(view.unmerged
      ? [`  not merged into ${view.base}: ${view.unmerged}; merge it later with \`troupe merge ${state.id}\``]
      : []),
  ];
}
