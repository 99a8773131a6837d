import { setTimeout as sleep } from 'node:timers/promises';
import { messageOf } from '../../core/errors.js';
import { currentHolder } from '../../core/event-store.js';
import type { StoredEvent } from '../../core/events.js';
import type { TaskState } from '../../engine/fold/task-state.js';
import type { RunObserver } from '../../engine/ports.js';
import { retryDelayMs } from '../../scheduler/issue-queue.js';
import { issueProgress } from '../issue-progress.js';
import { markdownInline } from '../markdown-text.js';
import { handOffIssue, pullRequestOf } from './issue-handoff.js';
import { CONTINUATION_DELAY_MS, maxTurns, startNextTurn, turnsOf } from './issue-turns.js';
import { isActiveState, type WatchContext } from './watch-poll.js';

/** The text of an issue's one progress comment, from its task's state and the pull request it ended at. */
export type ProgressText = (state: TaskState, pullRequest: string | null) => string;

/** Events after which the progress comment is written again. */
const PROGRESS_EVENTS = new Set([
  'stage_started',
  'stage_completed',
  'stage_failed',
  'gate_waiting',
  'human_input_requested',
]);

interface Run {
  taskId: string;
  identifier: string;
  stop: AbortController;
  lastActivity: number;
  /** A hook runs: it has its own timeout (hooks.timeout_ms), so it is not a stall. */
  inHook: boolean;
  why: 'stalled' | 'cancelled' | 'shutdown' | 'hook' | null;
  /** Why a hook (after_create, before_run) failed the attempt before the task ran. */
  hookFailure: string | null;
  done: Promise<void>;
}

/**
 * The tasks one watcher runs in its process, one per issue: each is carried on until it ends or
 * waits for a person, its progress comment kept up to date, and its end settled with the tracker
 * (hand-off, retry with backoff, give up), as Symphony's orchestrator does with its agents.
 */
export class IssueRuns {
  readonly #runs = new Map<string, Run>();
  /** Writes of an issue's progress comment, one after another. */
  readonly #comments = new Map<string, Promise<void>>();

  constructor(
    private readonly ctx: WatchContext,
    private readonly progressText: ProgressText = (state, pullRequest) =>
      issueProgress(state, { pullRequest }),
  ) {}

  get size(): number {
    return this.#runs.size;
  }

  has(issueId: string): boolean {
    return this.#runs.has(issueId);
  }

  taskOf(issueId: string): string | null {
    return this.#runs.get(issueId)?.taskId ?? null;
  }

  run(issueId: string, identifier: string, taskId: string): void {
    if (this.#runs.has(issueId)) return;
    const run: Run = {
      taskId,
      identifier,
      stop: new AbortController(),
      lastActivity: Date.now(),
      inHook: false,
      why: null,
      hookFailure: null,
      done: Promise.resolve(),
    };
    const observer: RunObserver = {
      onEvent: (event: StoredEvent, state: TaskState) => {
        run.lastActivity = Date.now();
        if (PROGRESS_EVENTS.has(event.type)) void this.progress(issueId, state);
      },
      onText: () => {
        run.lastActivity = Date.now();
      },
    };
    run.done = this.#attempt(issueId, run, observer)
      .then(
        (state) => this.#settle(issueId, run, state),
        (error) => this.ctx.warn(`${identifier}: task ${taskId} stopped: ${messageOf(error)}`),
      )
      .finally(() => {
        // a next turn's run may hold the issue already
        if (this.#runs.get(issueId) === run) this.#runs.delete(issueId);
      });
    this.#runs.set(issueId, run);
  }

  /** The end of the issue's run in this process, if it has one. */
  async ended(issueId: string): Promise<void> {
    await this.#runs.get(issueId)?.done;
  }

  /**
   * One attempt: WORKFLOW.md's hooks around the task's run (workflow-hooks.ts). A hook that fails
   * the attempt leaves the task as it was, its lease given back, to be retried as a failure is.
   */
  async #attempt(issueId: string, run: Run, observer: RunObserver): Promise<TaskState> {
    const { ctx } = this;
    const hooks = ctx.hooks;
    if (!hooks?.active) return ctx.tasks.continue(run.taskId, observer, run.stop.signal);
    const base = ctx.tasks.state(run.taskId).definition.workspace?.base;
    const issue = { issueId, identifier: run.identifier, taskId: run.taskId, base };
    const inHook = <T>(work: Promise<T>) => {
      run.inHook = true;
      return work.finally(() => {
        run.inHook = false;
      });
    };
    const failed = (why: string) => {
      ctx.store.releaseLease(run.taskId, currentHolder());
      if (run.why === null) {
        run.why = 'hook';
        run.hookFailure = why;
      }
      return ctx.tasks.state(run.taskId);
    };
    const prepared = await inHook(hooks.prepare(issue, run.stop.signal));
    if ('why' in prepared) return failed(prepared.why);
    try {
      const why = await inHook(hooks.beforeRun(issue, prepared.path, run.stop.signal));
      if (why !== null) return failed(why);
      run.lastActivity = Date.now();
      return await ctx.tasks.continue(run.taskId, observer, run.stop.signal);
    } finally {
      // however the attempt ended, stopped runs too (as Symphony's `after`): bounded by the hook timeout
      run.inHook = true;
      await hooks.afterAttempt(issue);
    }
  }

  /** The issue left the active states: its task is cancelled and stopped here. */
  cancel(issueId: string, taskId: string, reason: string): void {
    const run = this.#runs.get(issueId);
    if (run) run.why = 'cancelled';
    try {
      this.ctx.tasks.cancel(taskId, reason);
    } catch {
      // it had ended meanwhile
    }
    run?.stop.abort();
  }

  /** Ends runs with no output for the stall timeout; they are retried as failures are. */
  checkStalls(stallMs: number): void {
    if (stallMs <= 0) return;
    const now = Date.now();
    for (const run of this.#runs.values()) {
      if (run.why === null && !run.inHook && now - run.lastActivity > stallMs) {
        run.why = 'stalled';
        this.ctx.warn(
          `${run.identifier}: task ${run.taskId} stalled (no output for ${Math.round(stallMs / 1000)} s): ended, to be retried`,
        );
        run.stop.abort();
      }
    }
  }

  /** Stops every run (SIGINT/SIGTERM): each is interrupted as `troupe run` is, and resumed by the next watcher. */
  async stopAll(): Promise<void> {
    for (const run of this.#runs.values()) {
      run.why ??= 'shutdown';
      run.stop.abort();
    }
    await this.idle();
  }

  async idle(): Promise<void> {
    // a run that ends may start its issue's next turn
    while (this.#runs.size > 0) await Promise.allSettled([...this.#runs.values()].map((r) => r.done));
    await Promise.allSettled([...this.#comments.values()]);
  }

  async #settle(issueId: string, run: Run, state: TaskState): Promise<void> {
    const { ctx } = this;
    const { tracker } = ctx.opened;
    if (run.why === 'shutdown' || run.why === 'cancelled') return;
    // awaited before the next write: two writes of one backlog file at once can lose one
    await this.progress(issueId, state);
    if (state.status === 'completed') {
      if (maxTurns(ctx) !== null) await this.#afterTurn(issueId, run, state);
      else await this.#handOff(issueId, run.taskId);
      return;
    }
    // waiting for a person: it holds its claim
    if (state.status !== 'failed' && run.why !== 'stalled' && run.why !== 'hook') return;
    const ended = run.hookFailure ?? run.why ?? state.status;
    const source = tracker.source;
    const claim = ctx.store.issueClaims(source).find((c) => c.issueId === issueId);
    if (!claim) return;
    const attempts = claim.attempts + 1;
    if (attempts <= ctx.setup.config.max_retries) {
      const delay = retryDelayMs(
        attempts,
        ctx.setup.config.retry_backoff_ms,
        ctx.setup.config.max_retry_backoff_ms,
      );
      const retryAt = new Date(ctx.now().getTime() + delay).toISOString();
      ctx.store.updateIssueClaim(source, issueId, { attempts, retryAt });
      ctx.warn(
        `${run.identifier}: task ${run.taskId} ${ended}; retry ${attempts} of ${ctx.setup.config.max_retries} in ${Math.round(delay / 1000)} s`,
      );
      return;
    }
    ctx.store.updateIssueClaim(source, issueId, { attempts, retryAt: null });
    ctx.warn(`${run.identifier}: task ${run.taskId} ${ended} ${attempts} times; given up`);
    // a task its hooks never let run would otherwise be resumed as one no process runs
    if (run.hookFailure) ctx.tasks.cancel(run.taskId, `${run.hookFailure} ${attempts} times`);
    await this.#tracker(run, 'released', () => tracker.release(issueId, ctx.by));
    await this.#comment(
      issueId,
      `troupe gave up on this issue after ${attempts} tries (task ${run.taskId}: ${markdownInline(state.failure?.reason ?? run.hookFailure ?? run.why ?? 'failed')}). Move it out of the active states and back to try again.`,
    );
  }

  /**
   * A WORKFLOW.md task completed (issue-turns.ts): while its issue is active, its next turn 1 s
   * later, until `agent.max_turns`; then one line, and the hand-off. An issue the agent moved out
   * of the active states is handed off at once.
   */
  async #afterTurn(issueId: string, run: Run, state: TaskState): Promise<void> {
    const { ctx } = this;
    const { tracker } = ctx.opened;
    let active: boolean;
    try {
      active = isActiveState(ctx, (await tracker.states([issueId])).get(issueId) ?? null);
    } catch (error) {
      // a later poll's reconcile reads the issue and gives it its next turn if still active (turnDue)
      ctx.failed(`${run.identifier}: state not read after task ${run.taskId}`, error);
      return;
    }
    if (!active) return this.#handOff(issueId, run.taskId);
    const turns = turnsOf(ctx, run.taskId).length;
    const max = maxTurns(ctx)!;
    if (turns >= max) {
      const line = `still active after ${turns} turn${turns === 1 ? '' : 's'} (agent.max_turns ${max}): no more turns; move it out of the active states when it is done, or out and back to start afresh`;
      ctx.warn(`${run.identifier}: task ${run.taskId}: ${line}`);
      await this.#handOff(issueId, run.taskId);
      await this.#comment(
        issueId,
        `${this.progressText(state, pullRequestOf(ctx, issueId))}\n\ntroupe: this issue is ${line}.`,
      );
      return;
    }
    const retryAt = new Date(ctx.now().getTime() + CONTINUATION_DELAY_MS).toISOString();
    ctx.store.updateIssueClaim(tracker.source, issueId, { retryAt });
    run.lastActivity = Date.now();
    await sleep(CONTINUATION_DELAY_MS, undefined, { signal: run.stop.signal }).catch(() => {});
    // stopped or cancelled meanwhile: the claim keeps the continuation for the next watcher
    if (run.stop.signal.aborted) return;
    await this.nextTurn(issueId, run.identifier, run.taskId);
  }

  /** The issue's next turn after its completed task, run here; an issue no longer a candidate is handed off. */
  async nextTurn(issueId: string, identifier: string, taskId: string): Promise<void> {
    const { ctx } = this;
    let next: Awaited<ReturnType<typeof startNextTurn>>;
    try {
      next = await startNextTurn(ctx, issueId, taskId);
    } catch (error) {
      ctx.failed(`${identifier}: next turn after task ${taskId} not started`, error);
      return;
    }
    if ('taskId' in next) {
      ctx.warn(`${identifier}: still active after task ${taskId}: next turn, task ${next.taskId}`);
      this.#runs.delete(issueId);
      this.run(issueId, identifier, next.taskId);
    } else if (!next.candidate) await this.#handOff(issueId, taskId);
  }

  #handOff(issueId: string, taskId: string): Promise<void> {
    return handOffIssue(this.ctx, issueId, taskId, (s) => this.progress(issueId, s));
  }

  /** Writes the issue's progress comment for `state`, after the writes before it. */
  progress(issueId: string, state: TaskState): Promise<void> {
    return this.#comment(issueId, this.progressText(state, pullRequestOf(this.ctx, issueId)));
  }

  /** Posts or edits the issue's one comment, after the writes before it; a failure is one line. */
  #comment(issueId: string, body: string): Promise<void> {
    const { ctx } = this;
    const source = ctx.opened.tracker.source;
    const write = async () => {
      const claim = ctx.store.issueClaims(source).find((c) => c.issueId === issueId);
      if (!claim) return;
      try {
        const id = await ctx.opened.tracker.upsertComment(issueId, body, claim.commentId);
        if (id !== claim.commentId) ctx.store.updateIssueClaim(source, issueId, { commentId: id });
      } catch (error) {
        ctx.failed(`progress comment on ${issueId} not written`, error);
      }
    };
    const next = (this.#comments.get(issueId) ?? Promise.resolve()).then(write);
    this.#comments.set(issueId, next);
    return next;
  }

  async #tracker(run: Run, what: string, call: () => Promise<void>): Promise<void> {
    try {
      await call();
    } catch (error) {
      this.ctx.failed(`${run.identifier} not ${what}`, error);
    }
  }
}
