import type { RoutingConfig, Tier } from '../core/routing.js';

/**
 * Model and effort routing, pure: rules recommend a tier for a stage, then the local policy
 * applies the overrides (--tier, history, exploration, rejections in this task, budget, closed
 * windows) and decides. docs/routing.md describes the policy; every step it takes is named in
 * `overrides` so the decision log says why.
 */

export interface RouteContext {
  pipeline: string;
  agent: string;
  size: string | null;
  labels: string[];
  input: string;
  /** The agent's work is judged by a gate, so a cheaper tier can be tried safely. */
  gated: boolean;
  /** `troupe run --tier`. */
  forcedTier: string | null;
  /** The task has used 80 % of its budget. */
  budgetPressed: boolean;
  /** The tiers whose provider is closed now by a limit, with that provider (its key). */
  closed: ReadonlyMap<string, string>;
  /** Tiers of this agent's earlier stages in this task that its gate rejected. */
  rejectedHere: readonly string[];
}

/** What history says about a tier for one kind of task. */
export interface TierRecord {
  approved: number;
  rejected: number;
}

export interface RouteDecision {
  kind: string;
  recommended: { tier: string; reason: string };
  tier: string;
  overrides: string[];
  reason: string;
}

/** The kind of task history is kept by: pipeline, agent and task size. */
export function taskKind(pipeline: string, agent: string, size: string | null): string {
  return `${pipeline}/${agent}@${size ?? '-'}`;
}

export function recommendTier(routing: RoutingConfig, ctx: RouteContext): { tier: string; reason: string } {
  const words = new Set(ctx.input.toLowerCase().match(/[\p{L}\p{N}_-]+/gu) ?? []);
  for (const [i, rule] of routing.rules.entries()) {
    const conditions: string[] = [];
    if (rule.size) {
      if (!ctx.size || !rule.size.includes(ctx.size)) continue;
      conditions.push(`size ${ctx.size}`);
    }
    if (rule.agents) {
      if (!rule.agents.includes(ctx.agent)) continue;
      conditions.push(`agent ${ctx.agent}`);
    }
    if (rule.labels) {
      const label = rule.labels.find((l) => ctx.labels.includes(l));
      if (!label) continue;
      conditions.push(`label ${label}`);
    }
    if (rule.keywords) {
      const keyword = rule.keywords.find((k) => words.has(k.toLowerCase()));
      if (!keyword) continue;
      conditions.push(`keyword "${keyword}"`);
    }
    return {
      tier: rule.tier,
      reason: `rule ${i + 1}${conditions.length ? ` (${conditions.join(', ')})` : ''}`,
    };
  }
  return { tier: routing.default, reason: 'default tier' };
}

/** The router's tier when it named one; the rules' otherwise (saying why the router could not). */
function recommendation(routing: RoutingConfig, ctx: RouteContext, advice: RouterAdvice | null) {
  if (advice && !('error' in advice))
    return { tier: advice.tier, reason: `${ROUTER_REASON}${advice.reason}` };
  const ruled = recommendTier(routing, ctx);
  return advice ? { ...ruled, reason: `${ruled.reason} (router: ${advice.error})` } : ruled;
}

/** How a recommendation from the router model reads in the log (its reason follows). */
export const ROUTER_REASON = 'router: ';

/** What the router model said: a tier with its reason, or why it could not say. */
export type RouterAdvice = { tier: string; reason: string } | { error: string };

export function decideTier(
  routing: RoutingConfig,
  ctx: RouteContext,
  history: Readonly<Record<string, TierRecord>>,
  advice: RouterAdvice | null = null,
): RouteDecision {
  const kind = taskKind(ctx.pipeline, ctx.agent, ctx.size);
  const recommended = recommendation(routing, ctx, advice);
  const order = Object.keys(routing.tiers);
  const depth = (tier: string) => order.indexOf(tier);
  const overrides: string[] = [];
  const decided = (tier: string): RouteDecision => ({
    kind,
    recommended,
    tier,
    overrides,
    reason: overrides.at(-1) ?? recommended.reason,
  });

  if (ctx.forcedTier) {
    overrides.push(`--tier ${ctx.forcedTier}`);
    return decided(ctx.forcedTier);
  }

  let tier = recommended.tier;
  const learn = routing.learn;
  const samples = (t: string) => (history[t]?.approved ?? 0) + (history[t]?.rejected ?? 0);
  const rate = (t: string, of: keyof TierRecord) => (history[t]?.[of] ?? 0) / Math.max(1, samples(t));
  const record = (t: string, of: keyof TierRecord) => `${history[t]?.[of] ?? 0}/${samples(t)}`;
  const known = (t: string) => samples(t) >= learn.min_samples;
  const avoided = (t: string) => known(t) && rate(t, 'rejected') >= learn.avoid_rejection;

  if (learn.enabled) {
    while (avoided(tier) && depth(tier) < order.length - 1) {
      const from = tier;
      tier = order[depth(tier) + 1]!;
      overrides.push(`history: ${from} rejected ${record(from, 'rejected')} for ${kind}`);
    }
    const cheaper = order.slice(0, depth(tier));
    const proven = cheaper.find(
      (t) => known(t) && !avoided(t) && rate(t, 'approved') >= learn.prefer_approval,
    );
    if (proven) {
      tier = proven;
      overrides.push(`history: ${proven} approved ${record(proven, 'approved')} for ${kind}`);
    }
    const untried = order.slice(0, depth(tier)).find((t) => !known(t) && !ctx.rejectedHere.includes(t));
    if (learn.explore && ctx.gated && untried) {
      tier = untried;
      overrides.push(
        `exploring: ${untried} has ${samples(untried)} of ${learn.min_samples} outcomes for ${kind}`,
      );
    }
  }
  if (ctx.budgetPressed && depth(tier) > 0) {
    tier = order[0]!;
    overrides.push('budget: 80 % used, the cheapest tier');
  }
  const deepestRejected = Math.max(-1, ...ctx.rejectedHere.map(depth));
  if (deepestRejected >= 0 && depth(tier) <= deepestRejected) {
    const from = order[deepestRejected]!;
    tier = order[Math.min(deepestRejected + 1, order.length - 1)]!;
    overrides.push(`escalated: ${from} was rejected in this task`);
  }
  if (ctx.closed.has(tier)) {
    // deeper tiers first (the work still gets done well), then cheaper ones
    const open = [...order.slice(depth(tier) + 1), ...order.slice(0, depth(tier)).reverse()].find(
      (t) => !ctx.closed.has(t),
    );
    if (open) {
      overrides.push(`window: ${ctx.closed.get(tier)} is closed, ${open} is open`);
      tier = open;
    }
  }
  return decided(tier);
}

/** The agent as it runs on a tier: the tier's runtime and model; its effort unless one is set. */
export function onTier<T extends { runtime: string; model: string | null; effort?: string | null }>(
  node: T,
  tier: Tier,
  which: { model: boolean; effort: boolean },
): T {
  return {
    ...node,
    ...(which.model ? { runtime: tier.runtime ?? node.runtime, model: tier.model ?? null } : {}),
    ...(which.effort || (which.model && node.effort == null) ? { effort: tier.effort } : {}),
  };
}
