import { isTerminal } from '../../core/events.js';
import { TrackerError } from '../../core/tracker.js';
import { handOffIssue, handOffPending } from './issue-handoff.js';
import { IssueRuns, type ProgressText } from './issue-runs.js';
import { turnDue } from './issue-turns.js';
import type { PollTrigger } from './poll-trigger.js';
import {
  isActiveState,
  isTerminalState,
  type PollResult,
  pollOnce,
  retakeOrWhyNot,
  type WatchContext,
} from './watch-poll.js';

export interface WatchLoopOptions {
  /** One poll; the tasks it started run to their end (or a person), then it returns. */
  once: boolean;
  /** Aborted by SIGINT/SIGTERM: polling stops, running tasks are interrupted. */
  signal: AbortSignal;
  progressText?: ProgressText;
  /** Told of each poll's decision. */
  onPoll?: (result: PollResult) => void;
  /** "Poll now" (a tracker's webhook): ends the wait between polls, not a failure's back-off. */
  wake?: PollTrigger;
}

/** The longest pause between polls after failures. */
const MAX_ERROR_PAUSE_MS = 5 * 60_000;

/**
 * `troupe watch`: every interval, reconciles the issues it holds (cancels the tasks of issues that
 * left the active states, resumes claimed tasks no process runs, ends stalled runs), then starts
 * what is eligible. A tracker failure is one line (backed off), a pause (until a rate limit's
 * reset), never a crash and never a second task for an issue. With `once`, a failure is thrown.
 */
export async function watchLoop(ctx: WatchContext, options: WatchLoopOptions): Promise<void> {
  const runs = new IssueRuns(ctx, options.progressText);
  let failures = 0;
  while (!options.signal.aborted) {
    let pause = ctx.setup.config.polling.interval_ms;
    try {
      await tick(ctx, runs, options);
      failures = 0;
    } catch (error) {
      if (options.once) {
        await runs.idle();
        throw error;
      }
      failures++;
      pause = Math.min(pause * 2 ** Math.min(failures, 10), MAX_ERROR_PAUSE_MS);
      ctx.failed('poll', error);
      if (error instanceof TrackerError && error.kind === 'rate_limited' && error.resetAt) {
        const reset = Date.parse(error.resetAt) - ctx.now().getTime();
        if (reset > 0) pause = reset + 100;
      }
    }
    if (options.once) break;
    runs.checkStalls(ctx.setup.config.stall_timeout_ms);
    const wake = failures === 0 ? options.wake : undefined;
    await sleep(Math.max(pause, 0), options.signal, stallCheck(runs, ctx), wake);
  }
  if (options.signal.aborted) await runs.stopAll();
  else await runs.idle();
}

async function tick(ctx: WatchContext, runs: IssueRuns, options: WatchLoopOptions): Promise<void> {
  await reconcile(ctx, runs);
  const result = await pollOnce(ctx, { dryRun: false });
  for (const s of result.started) runs.run(s.issue.id, s.issue.identifier, s.taskId);
  options.onPoll?.(result);
}

/**
 * The issues this tracker's claims hold: one whose issue left the active states (closed, moved,
 * unlabelled, gone) has its task cancelled and its claim released; a claimed task no live
 * process runs (a watcher that stopped or died, a gate a person decided) is carried on here.
 */
async function reconcile(ctx: WatchContext, runs: IssueRuns): Promise<void> {
  const { tracker } = ctx.opened;
  const claims = ctx.store.issueClaims(tracker.source).filter((c) => c.taskId !== null);
  if (claims.length === 0) return;
  const states = await tracker.states(claims.map((c) => c.issueId));
  for (const claim of claims) {
    const taskId = claim.taskId!;
    const status = ctx.store.task(taskId)?.status;
    const state = states.get(claim.issueId) ?? null;
    if (!isActiveState(ctx, state)) {
      if (status && !isTerminal(status)) {
        runs.cancel(
          claim.issueId,
          taskId,
          `issue is ${state ?? 'gone or out of reach'} in ${tracker.source}`,
        );
        ctx.warn(`${claim.issueId}: issue is ${state ?? 'gone or out of reach'}: task ${taskId} cancelled`);
      }
      ctx.store.releaseIssue(tracker.source, claim.issueId);
      if (ctx.hooks && isTerminalState(ctx, state)) {
        // Symphony cleans a terminal issue's workspace: before_remove, then the worktree (not its branch)
        await runs.ended(claim.issueId);
        await ctx.hooks.removeWorkspace({
          issueId: claim.issueId,
          identifier: identifierOf(ctx, taskId, claim.issueId),
          taskId,
        });
      }
      if (status !== 'completed' && state !== null) {
        await tracker
          .release(claim.issueId, ctx.by)
          .catch((error: unknown) => ctx.failed(`${claim.issueId} not released`, error));
      }
      continue;
    }
    if (status === 'completed' && !runs.has(claim.issueId) && turnDue(ctx, claim)) {
      // a WORKFLOW.md issue still active after its turn: the next one (also after a restart)
      await runs.nextTurn(claim.issueId, identifierOf(ctx, taskId, claim.issueId), taskId);
      continue;
    }
    if (
      status === 'completed' &&
      !runs.has(claim.issueId) &&
      handOffPending(ctx, claim.issueId, ctx.tasks.state(taskId))
    ) {
      // it ended elsewhere (a person's approval ran it on), or its hand-off failed when it ended
      // (the tracker or gh was away): the note, the pull request and the move are done again
      // until the issue moves
      await runs.progress(claim.issueId, ctx.tasks.state(taskId));
      await handOffIssue(ctx, claim.issueId, taskId, (s) => runs.progress(claim.issueId, s));
      continue;
    }
    const due = claim.retryAt !== null && Date.parse(claim.retryAt) <= ctx.now().getTime();
    if (due && status !== 'cancelled' && !runs.has(claim.issueId)) {
      // retried from its claim: a tracker may no longer offer an issue it shows as taken (a
      // backlog task assigned to troupe is not a candidate)
      const why = retakeOrWhyNot(ctx, claim.issueId, taskId);
      if (why === null) runs.run(claim.issueId, identifierOf(ctx, taskId, claim.issueId), taskId);
      continue;
    }
    const resumable = status === 'running' || status === 'pending';
    if (
      resumable &&
      claim.retryAt === null &&
      !runs.has(claim.issueId) &&
      ctx.store.leaseHolder(taskId) === null
    ) {
      runs.run(claim.issueId, identifierOf(ctx, taskId, claim.issueId), taskId);
    }
  }
}

function identifierOf(ctx: WatchContext, taskId: string, issueId: string): string {
  return ctx.tasks.state(taskId).issue?.identifier ?? issueId;
}

/** Checks for stalls while it waits, at most every second. */
function stallCheck(runs: IssueRuns, ctx: WatchContext): () => void {
  return () => runs.checkStalls(ctx.setup.config.stall_timeout_ms);
}

function sleep(ms: number, signal: AbortSignal, every: () => void, wake?: PollTrigger): Promise<void> {
  return new Promise((resolve) => {
    const end = setTimeout(done, ms);
    const tick = setInterval(every, 1000);
    const unwake = wake?.listen(done);
    function done() {
      clearTimeout(end);
      clearInterval(tick);
      unwake?.();
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
