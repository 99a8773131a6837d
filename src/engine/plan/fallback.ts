import type { EventOf } from '../../core/events.js';
import type { AgentNode, RuntimeName } from '../../core/pipeline.js';
import { type ClosedProviders, type Env, providerKey } from '../../core/provider-key.js';
import type { StepOf } from './plan.js';
import { concreteModel } from './stage-route.js';

/**
 * Which runtime a stage runs on when providers are closed by their limits, and what a limit
 * means for the stage: pure, given the providers closed now. The executor records the result.
 */

export interface RuntimeChoice {
  runtime: RuntimeName;
  model: string | null;
}

/** A runtime the stage may use, with the provider (key) it would call. */
export interface ProviderChoice extends RuntimeChoice {
  provider: string;
}

/** The runtimes a stage may use, in order (its agent's, then `fallback:`), and the providers closed now. */
export interface StageRuntimes {
  choices: readonly ProviderChoice[];
  closed: ClosedProviders;
}

export type RunnerChoice =
  | {
      kind: 'run';
      /** The agent as it runs this stage: on its routed tier, or moved to a fallback. */
      runner: AgentNode;
      /** The provider called: the runner's (core/provider-key.ts). */
      provider: string;
      /** A move to a fallback, to record. */
      decision: EventOf<'decision'> | null;
      runtimes: StageRuntimes;
    }
  | { kind: 'closed'; provider: string; reopens: string; message: string; runtimes: StageRuntimes };

/**
 * Who runs a stage of `node` (`worker`: the agent on its routed tier): the agent when its
 * provider is open, else its first fallback whose provider is, else nobody: every provider it
 * may use is closed, and the stage waits with everything else that needs them. A fallback keeps
 * the agent's endpoint settings, so its provider is that of the agent moved to its runtime.
 */
export function chooseRunner(
  node: AgentNode,
  worker: AgentNode,
  stage: number,
  closed: ClosedProviders,
  env: Env,
): RunnerChoice {
  const runners = [
    worker,
    ...(node.fallback ?? []).map((f) => ({ ...worker, runtime: f.runtime, model: f.model })),
  ];
  const choices = runners.map((r) => ({ runtime: r.runtime, model: r.model, provider: providerKey(r, env) }));
  const runtimes = { choices, closed };
  const at = choices.findIndex((c) => !closed.isClosed(c.provider));
  if (at < 0) {
    const reopens = choices.map((c) => closed.until(c.provider)!).sort()[0]!;
    const names = [...new Set(choices.map((c) => c.provider))];
    return {
      kind: 'closed',
      provider: choices[0]!.provider,
      reopens,
      message: `${names.join(', ')} ${names.length > 1 ? 'are' : 'is'} closed until ${reopens}`,
      runtimes,
    };
  }
  const choice = choices[at]!;
  if (at === 0) return { kind: 'run', runner: worker, provider: choice.provider, decision: null, runtimes };
  return {
    kind: 'run',
    runner: runners[at]!,
    provider: choice.provider,
    decision: {
      type: 'decision',
      stage,
      agent: node.id,
      kind: 'fallback',
      from: { runtime: worker.runtime, model: concreteModel(worker.model) },
      to: { runtime: choice.runtime, model: choice.model },
      reason: `${choices[0]!.provider} is closed until ${closed.until(choices[0]!.provider)}`,
    },
    runtimes,
  };
}

export interface ProviderLimit {
  provider: string;
  resetAt: string;
  message: string;
  meta?: Record<string, string | number | boolean>;
}

/**
 * The stage met `limit`: with another of its runtimes still open it goes there at once (`retryAt`
 * now; the fallback is chosen when it restarts), otherwise it waits for the reset.
 */
export function rateLimitedEvent(
  step: StepOf<'start_stage'>,
  limit: ProviderLimit,
  { choices, closed }: StageRuntimes,
  now: Date,
): EventOf<'rate_limited'> {
  const fallbackOpen = choices.some((c) => c.provider !== limit.provider && !closed.isClosed(c.provider));
  return {
    type: 'rate_limited',
    stage: step.stage,
    activation: step.activation,
    agent: step.agent,
    provider: limit.provider,
    resetAt: limit.resetAt,
    ...(fallbackOpen ? { retryAt: now.toISOString() } : {}),
    message: limit.message,
    ...(limit.meta ? { meta: limit.meta } : {}),
  };
}
