import type { TaskEvent } from '../core/events.js';
import type { AgentNode } from '../core/pipeline.js';
import type { RuntimeError, RuntimeEvent, RuntimeRequest } from '../core/runtime.js';
import { parseSendDirectives } from '../pipeline/lang/directives.js';
import { withCost } from '../scheduler/prices.js';
import { noRelease } from '../scheduler/provider-limiter.js';
import type { Workplace } from './branch-workspaces.js';
import { chunkEventsFromOutput, usesChunks } from './chunks.js';
import { chooseRunner, type RunnerChoice, rateLimitedEvent } from './fallback.js';
import { outputCheckEvents } from './output-check.js';
import type { StepOf } from './plan.js';
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
import {
  concreteEffort,
  concreteModel,
  isRouted,
  RoutingUnavailableError,
  routeStage,
} from './stage-route.js';
import type { TaskState } from './task-state.js';

type Runner = Extract<RunnerChoice, { kind: 'run' }>;
type RuntimeResult = Extract<RuntimeEvent, { type: 'result' }>;

/**
 * One run of a stage: its prompt, where it works, who runs it, the provider's turn, the runtime
 * call, and what is recorded of how it ended (completed, limited, failed).
 */
export async function runStage(run: RunContext, step: StepOf<'start_stage'>): Promise<void> {
  if (step.notBefore) await sleepUntil(step.notBefore, run.signal);
  const node = run.agent(step.agent);
  // the provider whose limit this stage waited out (the fold clears it once the stage starts)
  const limitedBy = run.state.activations.get(step.activation)!.waitingFor?.provider ?? null;
  const prompt = renderPrompt(run, step, node);
  if (prompt === null) return;
  // awaited only when there is git work: an await here would let the loop flush the previous
  // stage's events on their own, a second transaction per stage
  const pending = run.workspace.workplace(step.activation);
  const place = pending instanceof Promise ? await pending : pending;
  if (!place) return;
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
  const started = Date.now();
  const streamed = new OutputBuffer((text) => {
    run.events.record([{ type: 'stage_output', stage: step.stage, text }]);
    run.events.flush();
  }, run.ports.flushMs);
  const chosen = await chooseStageRunner(run, step, node);
  if (!chosen) return;
  const request = buildRequest(run, step, node, chosen.runner, prompt, place, limitedBy);
  // what is recorded so far is in the store before the runtime runs (a store error is not the runtime's)
  run.events.flush();
  try {
    const result = await invoke(run, step, node, chosen, request, streamed);
    if (!result) return;
    const sha = await run.workspace.commitWorktree(step.stage, node.id, place);
    run.events.record(completionEvents(run.state, step, node, request, result, sha, place, started));
    const mail = run.ports.mail;
    const sends = mail ? parseSendDirectives(result.text) : [];
    if (mail && sends.length > 0) {
      // sent once the completion is in the store, so a stage run again never sends twice
      run.events.afterFlush(() => {
        for (const m of sends) mail.send({ taskId: run.taskId, from: node.id, ...m });
      });
    }
  } catch (error) {
    streamed.close();
    if (run.signal.aborted) throw error;
    run.events.record([failureEvent(run, step, node, chosen, asRuntimeError(error), streamed.all)]);
  }
}

/**
 * The stage's prompt, with the agent's unread mail when it reads `{{ inbox }}`. Null when the
 * template failed, and the task with it.
 */
function renderPrompt(run: RunContext, step: StepOf<'start_stage'>, node: AgentNode): string | null {
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
 * Who runs the stage: the agent, on its routed tier (model/effort auto), or on the first fallback
 * whose provider is open (fallback.ts). Null when it cannot run now (every provider it may use is
 * closed: the wait is recorded; or routing is impossible: the task failed).
 */
async function chooseStageRunner(
  run: RunContext,
  step: StepOf<'start_stage'>,
  node: AgentNode,
): Promise<Runner | null> {
  const closed = new Map(run.ports.store.closedProviders(new Date()).map((w) => [w.provider, w.resetAt]));
  let worker = node;
  if (isRouted(node)) {
    const advice = run.state.routes[step.stage] ? null : await askTierRouter(run, node);
    try {
      const routed = routeStage(
        run.state,
        node,
        step.stage,
        new Set(closed.keys()),
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
  const choice = chooseRunner(node, worker, step.stage, closed);
  if (choice.kind === 'closed') {
    const limit = { provider: choice.provider, resetAt: choice.reopens, message: choice.message };
    run.events.record([rateLimitedEvent(step, limit, choice.runtimes, new Date())]);
    return null;
  }
  if (choice.decision) run.events.record([choice.decision]);
  return choice;
}

function buildRequest(
  run: RunContext,
  step: StepOf<'start_stage'>,
  node: AgentNode,
  runner: AgentNode,
  prompt: string,
  place: Workplace,
  limitedBy: string | null,
): RuntimeRequest {
  const previousMeta = run.state.agentMeta[node.id] ?? [];
  // back on the provider that limited it, the stage continues the CLI's own conversation
  // (claude --resume, codex exec resume), so the agent keeps what it had done
  const resume = node.resume || limitedBy === runner.runtime;
  const rawName = `${step.stage}${step.turn ? `-r${step.turn.round}` : ''}`;
  return {
    agentId: node.id,
    purpose: 'stage',
    prompt,
    systemPrompt: node.system_prompt,
    model: concreteModel(runner.model),
    effort: concreteEffort(runner.effort),
    cwd: place.cwd,
    mcp: node.mcp,
    extraFlags: node.cli_flags,
    timeoutMs: (node.timeout ?? run.state.timeouts[runner.runtime] ?? 600) * 1000,
    signal: run.signal,
    resumeSessionId: resume ? resumableSession(previousMeta) : null,
    previousMeta,
    permissions: node.permissions ?? null,
    command: node.command ?? null,
    openai: node.openai ? { baseUrl: node.openai.base_url, apiKeyEnv: node.openai.api_key_env } : null,
    rawLogPath: run.ports.rawLogPath?.(run.taskId, rawName) ?? null,
  };
}

/**
 * The runtime call, in the provider's turn (`limits:`). Null when the provider was closed by
 * another task while this one waited its turn: no call into a closed window (the wait is recorded).
 */
async function invoke(
  run: RunContext,
  step: StepOf<'start_stage'>,
  node: AgentNode,
  { runner, provider, runtimes }: Runner,
  request: RuntimeRequest,
  streamed: OutputBuffer,
): Promise<RuntimeResult | null> {
  const runtime = run.ports.runtimeFor(run.state, runner, 'stage');
  if (runtime.name !== 'scripted') await run.files.sync();
  const turn = run.ports.limiter?.acquire(provider, run.signal) ?? noRelease;
  const release = typeof turn === 'function' ? turn : await turn;
  const closedNow = run.ports.store.closedProviders(new Date()).find((w) => w.provider === provider);
  if (closedNow) {
    release();
    streamed.close();
    const limit = {
      provider,
      resetAt: closedNow.resetAt,
      message: `${provider} is closed until ${closedNow.resetAt}`,
    };
    run.events.record([rateLimitedEvent(step, limit, runtimes, new Date())]);
    return null;
  }
  const result = await invokeRuntime(run.signal, runtime, request, (text) => {
    streamed.add(text);
    run.ports.observer?.onText?.(step.stage, node.id, text);
  }).finally(release);
  streamed.close();
  return result;
}

/** The stage's completion, its commit, and what its output says (chunks, size, spec, schema). */
function completionEvents(
  state: TaskState,
  step: StepOf<'start_stage'>,
  node: AgentNode,
  request: RuntimeRequest,
  result: RuntimeResult,
  sha: string | null,
  place: Workplace,
  started: number,
): TaskEvent[] {
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
      usage: withCost(result.usage, request.model, state.prices),
      durationMs: Date.now() - started,
      ...(result.meta ? { meta: result.meta } : {}),
    },
    ...(sha
      ? [
          {
            type: 'workspace_committed' as const,
            stage: step.stage,
            sha,
            ...(place.branch ? { branch: place.branch } : {}),
          },
        ]
      : []),
    ...chunkEvents,
    ...outputCheckEvents(state, node, step.stage, result.text, step.turn !== undefined),
  ];
}

/**
 * A failed call: a limit closes its provider for every task and the stage waits for the reset
 * (or goes to an open fallback); anything else is a failed attempt, retried after the agent's
 * backoff or the error's own reset time.
 */
function failureEvent(
  run: RunContext,
  step: StepOf<'start_stage'>,
  node: AgentNode,
  { provider, runtimes }: Runner,
  failure: RuntimeError,
  partialOutput: string,
): TaskEvent {
  if (failure.kind === 'rate_limited' || failure.kind === 'usage_limit') {
    const resetAt = resetTime(run, failure.resetAt, step.activation);
    run.rateLimits.set(step.stage, (run.rateLimits.get(step.stage) ?? 0) + 1);
    run.ports.store.closeProvider(provider, resetAt);
    const limit = { provider, resetAt, message: failure.message, meta: failure.options.meta };
    return rateLimitedEvent(step, limit, runtimes, new Date());
  }
  const backoffS = node.retry?.backoff ?? 0;
  const retryAt = failure.resetAt ?? (backoffS > 0 ? new Date(Date.now() + backoffS * 1000) : undefined);
  return {
    type: 'stage_attempt_failed',
    stage: step.stage,
    activation: step.activation,
    agent: node.id,
    attempt: step.attempt,
    error: { kind: failure.kind, message: failure.message },
    partialOutput: failure.options.partialOutput ?? partialOutput,
    ...(retryAt ? { retryAt: retryAt.toISOString() } : {}),
    meta: { ...failure.options.meta, error_kind: failure.kind },
  };
}

/** When to try again (limitResetTime), counting the limits this stage has met in this process. */
function resetTime(run: RunContext, given: Date | undefined, activationId: string): string {
  const activation = run.state.activations.get(activationId);
  const previous = activation?.stage ? (run.rateLimits.get(activation.stage) ?? 0) : 0;
  return limitResetTime(given, previous, new Date()).toISOString();
}
