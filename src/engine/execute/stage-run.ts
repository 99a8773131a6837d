import type { TaskEvent } from '../../core/events.js';
import type { AgentNode } from '../../core/pipeline.js';
import { ClosedProviders, type Env } from '../../core/provider-key.js';
import {
  attemptEnv,
  type RuntimeError,
  type RuntimeEvent,
  type RuntimeRequest,
  taskProcessTag,
} from '../../core/runtime.js';
import { parseSendDirectives } from '../../pipeline/lang/directives.js';
import { preparePlanCheck } from '../../pipeline/lang/plan.js';
import { withCost } from '../../scheduler/prices.js';
import { noRelease } from '../../scheduler/provider-limiter.js';
import type { TaskState } from '../fold/task-state.js';
import { chunkEventsFromOutput, usesChunks } from '../plan/chunks.js';
import { chooseRunner, type RunnerChoice, rateLimitedEvent } from '../plan/fallback.js';
import type { StepOf } from '../plan/plan.js';
import { type RetryDecision, retryAfter } from '../plan/retry-policy.js';
import {
  concreteEffort,
  concreteModel,
  isRouted,
  RoutingUnavailableError,
  routeStage,
} from '../plan/stage-route.js';
import type { Workplace } from './branch-workspaces.js';
import { MAILBOX_USAGE, mailStage, mailsStage } from './mailbox-stage.js';
import { outputCheckEvents } from './output-check.js';
import { readsVariable, stagePrompt, turnPrompt } from './prompt.js';
import { askTierRouter } from './router-calls.js';
import type { RunContext } from './run-context.js';
import {
  asRuntimeError,
  invokeRuntime,
  limitResetTime,
  OutputBuffer,
  resumableSession,
  sleepUntil,
} from './run-support.js';
import { StageMcp } from './troupe-mcp.js';

type Runner = Extract<RunnerChoice, { kind: 'run' }>;
type RuntimeResult = Extract<RuntimeEvent, { type: 'result' }>;

/**
 * One run of a stage: its prompt, where it works, who runs it, the provider's turn, the runtime
 * call, and what is recorded of how it ended (completed, limited, failed).
 */
export async function runStage(run: RunContext, step: StepOf<'start_stage'>): Promise<void> {
  if (step.notBefore) await sleepUntil(step.notBefore, run.signal);
  return new StageRun(run, step, run.agent(step.agent)).perform();
}

/** A mailbox agent's reply was taken off the bus (mailbox-stage.ts): the stage completes with it. */
export async function finishMailboxStage(
  run: RunContext,
  step: StepOf<'finish_mailbox_stage'>,
): Promise<void> {
  const reply = run.state.activations.get(step.activation)?.mailbox?.reply;
  const record = run.state.stages[step.stage - 1];
  if (!reply || !record) return;
  const start: StepOf<'start_stage'> = {
    kind: 'start_stage',
    activation: step.activation,
    agent: step.agent,
    stage: step.stage,
    attempt: record.attempt,
    input: record.input,
    notBefore: null,
  };
  const pending = run.workspace.workplace(step.activation);
  const place = pending instanceof Promise ? await pending : pending;
  if (!place) return;
  const stage = new StageRun(run, start, run.agent(step.agent));
  await stage.complete(
    place,
    { type: 'result', text: reply.body, usage: { ...MAILBOX_USAGE } },
    Date.parse(record.startedAt),
  );
}

class StageRun {
  constructor(
    private readonly run: RunContext,
    private step: StepOf<'start_stage'>,
    private readonly node: AgentNode,
  ) {}

  async perform(): Promise<void> {
    const { run, node } = this;
    let step = this.step;
    // the provider whose limit this stage waited out (the fold clears it once the stage starts)
    const limitedBy = run.state.activations.get(step.activation)!.waitingFor?.provider ?? null;
    const prompt = this.renderPrompt();
    if (prompt === null) return;
    // awaited only when there is git work: an await here would let the loop flush the previous
    // stage's events on their own, a second transaction per stage
    const pending = run.workspace.workplace(step.activation);
    const place = pending instanceof Promise ? await pending : pending;
    if (!place) return;
    step = this.numbered();
    run.events.record([
      {
        type: 'stage_started',
        stage: step.stage,
        activation: step.activation,
        agent: node.id,
        input: step.input,
        attempt: step.attempt,
        ...(step.turn ? { turn: step.turn } : {}),
      },
    ]);
    if (mailsStage(run.state, node)) {
      mailStage(run, step, node, prompt, place);
      return;
    }
    const started = Date.now();
    const streamed = new OutputBuffer((text) => {
      run.events.record([{ type: 'stage_output', stage: step.stage, text }]);
      run.events.flush();
    }, run.ports.flushMs);
    const chosen = await this.chooseStageRunner();
    if (!chosen) return;
    const mcp = StageMcp.of(run, step, node);
    const request = this.buildRequest(chosen, prompt, place, limitedBy, mcp);
    // what is recorded so far is in the store before the runtime runs (a store error is not the runtime's)
    run.events.flush();
    // a planner's plan is checked when its stage ends, on the graph's critical path: the check's
    // first use (loading its JSON Schema validator) is paid while the planner works instead
    if (node.plan) setImmediate(preparePlanCheck);
    try {
      const called = await this.invoke(chosen, request, streamed);
      if (!called) return;
      // troupe's MCP tool calls count as the directives they stand for
      const usage = withCost(called.usage, request.model, run.state.prices);
      await this.complete(place, { ...called, text: mcp.output(called.text), usage }, started);
    } catch (error) {
      streamed.close();
      if (run.signal.aborted) throw error;
      run.events.record([this.failureEvent(chosen, asRuntimeError(error), streamed.all, started)]);
    }
  }

  /**
   * The stage's prompt, with the agent's unread mail when it reads `{{ inbox }}`. Null when the
   * template failed, and the task with it.
   */
  private renderPrompt(): string | null {
    const { run, step, node } = this;
    try {
      let inbox = '';
      if (run.ports.mail && readsVariable(node, 'inbox')) {
        run.events.flush(); // mail that earlier stages sent goes out first
        inbox = run.ports.mail.drainInbox(node.id);
      }
      const activation = run.state.activations.get(step.activation)!;
      return step.turn
        ? turnPrompt(run.state, node, step.input, inbox)
        : stagePrompt(run.state, node, activation, step.input, step.attempt, inbox);
    } catch (error) {
      run.events.failTask('template_error', error);
      return null;
    }
  }

  /**
   * A new stage takes its number when it is recorded, not when it was planned: stages planned
   * together may find their worktrees ready in another order, and the log's stages have no gaps
   * (what reads them walks them in order). A stage run again, or a session's turn, keeps its number.
   */
  private numbered(): StepOf<'start_stage'> {
    const { run, step } = this;
    if (step.turn || run.state.activations.get(step.activation)?.stage !== null) return step;
    this.step = { ...step, stage: run.state.stages.length + 1 };
    return this.step;
  }

  /**
   * Who runs the stage: the agent, on its routed tier (model/effort auto), or on the first
   * fallback whose provider is open (fallback.ts). Null when it cannot run now (every provider it
   * may use is closed: the wait is recorded; or routing is impossible: the task failed).
   */
  private async chooseStageRunner(): Promise<Runner | null> {
    const { run, step, node } = this;
    const closed = new ClosedProviders(run.ports.store.closedProviders(new Date()));
    const env = providerEnv(run);
    let worker = node;
    if (isRouted(node)) {
      const advice = run.state.routes[step.stage] ? null : await askTierRouter(run, node);
      try {
        const routed = routeStage(
          run.state,
          node,
          step.stage,
          step.activation,
          { closed, env },
          () => run.routeHistory(),
          advice,
        );
        worker = routed.node;
        if (routed.decision) run.events.record([routed.decision]);
      } catch (error) {
        if (!(error instanceof RoutingUnavailableError)) throw error;
        run.events.failTask(error.code, error);
        return null;
      }
    }
    const choice = chooseRunner(node, worker, step.stage, closed, env);
    if (choice.kind === 'closed') {
      const limit = { provider: choice.provider, resetAt: choice.reopens, message: choice.message };
      run.events.record([rateLimitedEvent(step, limit, choice.runtimes, new Date())]);
      return null;
    }
    if (choice.decision) run.events.record([choice.decision]);
    return choice;
  }

  private buildRequest(
    { runner, provider }: Runner,
    prompt: string,
    place: Workplace,
    limitedBy: string | null,
    mcp: StageMcp,
  ): RuntimeRequest {
    const { run, step, node } = this;
    const previousMeta = run.state.agentMeta[node.id] ?? [];
    // back on the provider that limited it, the stage continues the CLI's own conversation
    // (claude --resume, codex exec resume), so the agent keeps what it had done
    const resume = node.resume || limitedBy === provider;
    const rawName = `${step.stage}${step.turn ? `-r${step.turn.round}` : ''}`;
    return {
      agentId: node.id,
      purpose: 'stage',
      prompt,
      systemPrompt: node.system_prompt,
      model: concreteModel(runner.model),
      effort: concreteEffort(runner.effort),
      cwd: place.cwd,
      mcp: mcp.servers(node),
      extraFlags: node.cli_flags,
      timeoutMs: (node.timeout ?? run.state.timeouts[runner.runtime] ?? 600) * 1000,
      signal: run.signal,
      resumeSessionId: resume ? resumableSession(previousMeta) : null,
      previousMeta,
      permissions: node.permissions ?? null,
      runtimeOptions: {
        ...(node.command ? { command: node.command } : {}),
        ...(node.openai
          ? { openai: { baseUrl: node.openai.base_url, apiKeyEnv: node.openai.api_key_env } }
          : {}),
      },
      rawLogPath: run.ports.rawLogPath?.(run.taskId, rawName) ?? null,
      processTag: taskProcessTag(run.taskId),
      env: attemptEnv(run.taskId, step.stage, step.attempt),
      outputSchema: step.turn ? null : (node.output_schema ?? null),
      maxBudgetUsd: remainingUsd(run.state),
      keepSession: node.resume,
    };
  }

  /**
   * The runtime call, in the provider's turn (`limits:`). Null when another task closed the
   * provider while this one waited its turn: no call into a closed window (the wait is recorded).
   */
  private async invoke(
    { runner, provider, runtimes }: Runner,
    request: RuntimeRequest,
    streamed: OutputBuffer,
  ): Promise<RuntimeResult | null> {
    const { run, step, node } = this;
    const runtime = run.ports.runtimeFor(run.state, runner, 'stage');
    if (runtime.name !== 'scripted') await run.files.sync();
    const turn = run.ports.limiter?.acquire(runner.runtime, provider, run.signal) ?? noRelease;
    const release = typeof turn === 'function' ? turn : await turn;
    const closedUntil = new ClosedProviders(run.ports.store.closedProviders(new Date())).until(provider);
    if (closedUntil) {
      release();
      streamed.close();
      const message = `${provider} is closed until ${closedUntil}`;
      run.events.record([
        rateLimitedEvent(step, { provider, resetAt: closedUntil, message }, runtimes, new Date()),
      ]);
      return null;
    }
    const result = await invokeRuntime(
      run.signal,
      runtime,
      request,
      (text) => {
        streamed.add(text);
        run.ports.observer?.onText?.(step.stage, node.id, text);
      },
      // recorded with the stage's outcome, in its transaction
      (message) => run.events.record([{ type: 'stage_warning', stage: step.stage, agent: node.id, message }]),
    ).finally(release);
    streamed.close();
    return result;
  }

  /**
   * The stage is done: its commit, its completion, and its `SEND:` mail. The commit counts only if
   * this run still holds the task: it goes on the branch once its events are stored (a store that
   * refuses them, the lease lost, leaves the branch as it was).
   */
  async complete(place: Workplace, result: RuntimeResult, started: number): Promise<void> {
    const { run, step, node } = this;
    const commit = await run.workspace.commitWorktree(step.stage, node.id, place);
    const sha = commit?.sha ?? null;
    run.events.record(this.completionEvents(result, { sha, branch: place.branch }, started));
    this.sendMail(result.text);
    if (!commit) return;
    run.events.flush();
    await run.workspace.advance(place, commit);
  }

  /** The stage's completion, its commit, and what its output says (chunks, size, spec, schema). */
  private completionEvents(
    result: RuntimeResult,
    commit: { sha: string | null; branch: string | null },
    started: number,
  ): TaskEvent[] {
    const { run, step, node } = this;
    const { state } = run;
    const chunkEvents = usesChunks(state.definition)
      ? chunkEventsFromOutput(state.chunks, node.id, result.text, new Date().toISOString())
      : [];
    return [
      {
        type: 'stage_completed',
        stage: step.stage,
        activation: step.activation,
        agent: node.id,
        output: result.text,
        usage: result.usage,
        durationMs: Date.now() - started,
        ...(result.meta ? { meta: result.meta } : {}),
      },
      ...(commit.sha
        ? [
            {
              type: 'workspace_committed' as const,
              stage: step.stage,
              sha: commit.sha,
              ...(commit.branch ? { branch: commit.branch } : {}),
            },
          ]
        : []),
      ...chunkEvents,
      ...outputCheckEvents(state, node, step.stage, result.text, step.turn !== undefined),
    ];
  }

  /** The output's `SEND:` lines, sent once the completion is in the store (a stage run again never sends twice). */
  private sendMail(output: string): void {
    const { run, node } = this;
    const mail = run.ports.mail;
    const sends = mail ? parseSendDirectives(output) : [];
    if (!mail || sends.length === 0) return;
    for (const m of sends) {
      run.events.mailAfterFlush({ to: m.to, kind: 'status', subject: m.subject }, () =>
        mail.send({ taskId: run.taskId, from: node.id, ...m }),
      );
    }
  }

  /**
   * A failed call: a limit closes its provider for every task and the stage waits for the reset
   * (or goes to an open fallback); anything else is a failed attempt, which the planner retries
   * or fails by retry-policy.ts, and a retry's time is recorded with it (the error's own reset
   * time, else the backoff), so the wait outlives this process.
   */
  private failureEvent(
    { provider, runtimes }: Runner,
    failure: RuntimeError,
    partialOutput: string,
    started: number,
  ): TaskEvent {
    const { run, step, node } = this;
    if (failure.kind === 'rate_limited' || failure.kind === 'usage_limit') {
      const resetAt = resetTime(run, failure.resetAt, step.activation);
      run.rateLimits.set(step.stage, (run.rateLimits.get(step.stage) ?? 0) + 1);
      run.ports.store.closeProvider(provider, resetAt);
      const limit = { provider, resetAt, message: failure.message, meta: failure.options.meta };
      return rateLimitedEvent(step, limit, runtimes, new Date());
    }
    const retryAt = retryTime(retryAfter(node, failure.kind, step.attempt), failure.resetAt, new Date());
    return {
      type: 'stage_attempt_failed',
      stage: step.stage,
      activation: step.activation,
      agent: node.id,
      attempt: step.attempt,
      error: {
        kind: failure.kind,
        message: failure.message,
        ...(failure.hint ? { hint: failure.hint } : {}),
      },
      partialOutput: failure.options.partialOutput ?? partialOutput,
      durationMs: Date.now() - started,
      ...(retryAt ? { retryAt: retryAt.toISOString() } : {}),
      meta: { ...failure.options.meta, error_kind: failure.kind },
    };
  }
}

/** When a retry may start: the error's own reset time when it is ahead, else after the backoff; undefined when now. */
function retryTime(decision: RetryDecision, resetAt: Date | undefined, now: Date): Date | undefined {
  if (!decision.retry) return undefined;
  if (resetAt && resetAt > now) return resetAt;
  return decision.delayMs > 0 ? new Date(now.getTime() + decision.delayMs) : undefined;
}

/**
 * The environment provider keys are computed in: the one the runtimes get, except under a script,
 * where no account is used (and the keys are the same on every machine).
 */
function providerEnv(run: RunContext): Env {
  return run.state.script ? {} : (run.ports.env ?? {});
}

/** When to try again (limitResetTime), counting the limits this stage has met in this process. */
function resetTime(run: RunContext, given: Date | undefined, activationId: string): string {
  const activation = run.state.activations.get(activationId);
  const previous = activation?.stage ? (run.rateLimits.get(activation.stage) ?? 0) : 0;
  return limitResetTime(given, previous, new Date()).toISOString();
}

/** What is left of the task's `budget.usd` (null: no dollar budget). */
function remainingUsd(state: TaskState): number | null {
  const usd = state.definition.budget?.usd ?? null;
  return usd === null ? null : Math.max(0, usd - (state.usage.cost_usd ?? 0));
}
