import type { EventOf } from '../../core/events.js';
import type { AgentNode, RuntimeName } from '../../core/pipeline.js';
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

/** The runtimes a stage may use, in order (its agent's, then `fallback:`), and the closed providers with their reset times. */
export interface StageRuntimes {
  choices: readonly RuntimeChoice[];
  closed: ReadonlyMap<string, string>;
}

export type RunnerChoice =
  | {
      kind: 'run';
      /** The agent as it runs this stage: on its routed tier, or moved to a fallback. */
      runner: AgentNode;
      /** The provider called: the runner's runtime. */
      provider: string;
      /** A move to a fallback, to record. */
      decision: EventOf<'decision'> | null;
      runtimes: StageRuntimes;
    }
  | { kind: 'closed'; provider: string; reopens: string; message: string; runtimes: StageRuntimes };

/**
 * Who runs a stage of `node` (`worker`: the agent on its routed tier): the agent when its
 * provider is open, else its first fallback whose provider is, else nobody: every provider it
 * may use is closed, and the stage waits with everything else that needs them.
 */
export function chooseRunner(
  node: AgentNode,
  worker: AgentNode,
  stage: number,
  closed: ReadonlyMap<string, string>,
): RunnerChoice {
  const choices = [{ runtime: worker.runtime, model: worker.model }, ...(node.fallback ?? [])];
  const runtimes = { choices, closed };
  const choice = choices.find((c) => !closed.has(c.runtime));
  if (!choice) {
    const reopens = choices.map((c) => closed.get(c.runtime)!).sort()[0]!;
    const names = choices.map((c) => c.runtime).join(', ');
    return {
      kind: 'closed',
      provider: worker.runtime,
      reopens,
      message: `${names} ${choices.length > 1 ? 'are' : 'is'} closed until ${reopens}`,
      runtimes,
    };
  }
  if (choice === choices[0])
    return { kind: 'run', runner: worker, provider: choice.runtime, decision: null, runtimes };
  return {
    kind: 'run',
    runner: { ...worker, runtime: choice.runtime, model: choice.model },
    provider: choice.runtime,
    decision: {
      type: 'decision',
      stage,
      agent: node.id,
      kind: 'fallback',
      from: { runtime: worker.runtime, model: concreteModel(worker.model) },
      to: { runtime: choice.runtime, model: choice.model },
      reason: `${worker.runtime} is closed until ${closed.get(worker.runtime)}`,
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
  const fallbackOpen = choices.some((c) => c.runtime !== limit.provider && !closed.has(c.runtime));
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
