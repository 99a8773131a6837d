import { TroupeError } from '../../core/errors.js';
import type { EventOf } from '../../core/events.js';
import type { AgentNode } from '../../core/pipeline.js';
import type { Effort } from '../../core/pipeline-vocabulary.js';
import { type ClosedProviders, type Env, providerKey } from '../../core/provider-key.js';
import type { Tier } from '../../core/routing.js';
import { decideTier, onTier, ROUTER_REASON, type RouterAdvice, taskKind } from '../../scheduler/route.js';
import { type RouteOutcome, tierRecords } from '../../scheduler/route-history.js';
import { pieceOfActivation, type TaskState } from '../fold/task-state.js';

/**
 * Where an agent with `model: auto` or `effort: auto` runs a stage: the tier recorded for that
 * stage (a stage run again after a crash is not routed again), else a new decision.
 */

/** A routed stage (model or effort auto) in a project whose config has no routing tiers. */
export class RoutingUnavailableError extends TroupeError {
  readonly code = 'routing_unavailable';
  constructor(message: string) {
    super(message, { hint: 'add routing: tiers to .troupe/config.yaml (docs/routing.md)' });
  }
}

export function isRouted(node: AgentNode): boolean {
  return node.model === 'auto' || node.effort === 'auto';
}

/** A setting of `auto` means nothing to a runtime: only a routed stage replaces it. */
export function concreteEffort(effort: Effort | 'auto' | null | undefined): Effort | null {
  return effort && effort !== 'auto' ? effort : null;
}

export function concreteModel(model: string | null | undefined): string | null {
  return model && model !== 'auto' ? model : null;
}

export function routeStage(
  state: TaskState,
  node: AgentNode,
  stage: number,
  activation: string,
  providers: { closed: ClosedProviders; env: Env },
  history: () => readonly RouteOutcome[],
  advice: RouterAdvice | null = null,
): { node: AgentNode; decision: EventOf<'decision'> | null } {
  const routing = state.routing;
  if (!routing) {
    throw new RoutingUnavailableError(
      `agent ${node.id} has ${node.model === 'auto' ? 'model' : 'effort'}: auto but .troupe/config.yaml has no routing: tiers`,
    );
  }
  const which = { model: node.model === 'auto', effort: node.effort === 'auto' };
  const known = state.routes[stage];
  if (known) {
    const tier = {
      runtime: known.runtime as AgentNode['runtime'] & Tier['runtime'],
      model: known.model,
      effort: known.effort,
    };
    return { node: onTier(node, tier, which), decision: null };
  }
  const closed = new Map<string, string>();
  for (const [name, tier] of Object.entries(routing.tiers)) {
    const key = providerKey(onTier(node, tier, which), providers.env);
    if (providers.closed.isClosed(key)) closed.set(name, key);
  }
  // a plan's piece is routed by its own size and labels (and the task's labels)
  const piece = pieceOfActivation(state, activation);
  const size = piece?.size ?? state.size?.size ?? null;
  const labels = piece ? [...new Set([...state.labels, ...piece.labels])] : state.labels;
  const rejectedHere = state.stages
    .filter((s) => s.agent === node.id && s.gate?.decision === 'rejected' && state.routes[s.n])
    .map((s) => state.routes[s.n]!.tier);
  const decision = decideTier(
    routing,
    {
      pipeline: state.pipeline,
      agent: node.id,
      size,
      labels,
      input: state.input,
      gated: node.gate !== null,
      forcedTier: state.forcedTier,
      budgetPressed: state.budgetWarned,
      closed,
      rejectedHere,
    },
    tierRecords(history(), taskKind(state.pipeline, node.id, size)),
    advice,
  );
  const routed = onTier(node, routing.tiers[decision.tier]!, which);
  return {
    node: routed,
    decision: {
      type: 'decision',
      stage,
      agent: node.id,
      kind: 'route',
      taskKind: decision.kind,
      recommended: decision.recommended,
      tier: decision.tier,
      runtime: routed.runtime,
      model: concreteModel(routed.model),
      effort: concreteEffort(routed.effort),
      overrides: decision.overrides,
      reason: decision.reason,
    },
  };
}

/** The router's advice this agent already had in this task (it is asked once per agent). */
export function earlierAdvice(state: TaskState, agent: string): RouterAdvice | null {
  const earlier = state.stages.find(
    (s) => s.agent === agent && state.routes[s.n]?.recommended.reason.startsWith(ROUTER_REASON),
  );
  if (!earlier) return null;
  const { tier, reason } = state.routes[earlier.n]!.recommended;
  return { tier, reason: reason.slice(ROUTER_REASON.length) };
}
