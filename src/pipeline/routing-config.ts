import { z } from 'zod';
import type { Effort } from '../core/runtime.js';
import { EFFORTS, GATE_RUNTIMES } from './schema.js';
import type { RuntimeName } from '../core/pipeline.js';

/**
 * `routing:` and `limits:` in .troupe/config.yaml: the named tiers an agent with `model: auto` or
 * `effort: auto` is routed to, the rules that recommend one, how history may change the choice,
 * and per-provider caps. docs/routing.md explains the policy.
 */

export interface Tier {
  /** null: the agent's own runtime. */
  runtime: Exclude<RuntimeName, 'command'> | null;
  model: string | null;
  effort: Effort | null;
}

export interface RoutingRule {
  tier: string;
  /** Every condition given must hold; an absent one holds. */
  size: string[] | null;
  agents: string[] | null;
  labels: string[] | null;
  /** Whole words of the task's input, case-insensitive; any one matches. */
  keywords: string[] | null;
}

export interface LearnSettings {
  enabled: boolean;
  /** Outcomes of a tier for a kind of task before its record counts. */
  min_samples: number;
  /** A cheaper tier approved at least this often is preferred. */
  prefer_approval: number;
  /** A tier rejected at least this often is no longer chosen for that kind of task. */
  avoid_rejection: number;
  /** Try cheaper tiers that have no record yet for this kind of task (gated agents only). */
  explore: boolean;
}

/** A model that reads the task and recommends a tier (instead of the rules). */
export interface TierRouter {
  runtime: Exclude<RuntimeName, 'command'>;
  model: string | null;
}

export interface RoutingConfig {
  /** Cheapest first, as written. */
  tiers: Record<string, Tier>;
  router: TierRouter | null;
  /** The tier when no rule matches; default: the last (deepest) tier. */
  default: string;
  rules: RoutingRule[];
  learn: LearnSettings;
}

export interface ProviderLimit {
  concurrency: number | null;
  requests_per_minute: number | null;
}

const list = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

export const RoutingSchema = z.strictObject({
  tiers: z.record(
    z.string().regex(/^[A-Za-z0-9_-]+$/),
    z.strictObject({
      runtime: z.enum(GATE_RUNTIMES).nullish(),
      model: z.string().min(1).nullish(),
      effort: z.enum(EFFORTS).nullish(),
    }),
  ),
  default: z.string().min(1).nullish(),
  router: z.strictObject({ runtime: z.enum(GATE_RUNTIMES), model: z.string().min(1).nullish() }).nullish(),
  rules: z
    .array(
      z.strictObject({
        tier: z.string().min(1),
        size: list.nullish(),
        agents: list.nullish(),
        labels: list.nullish(),
        keywords: list.nullish(),
      }),
    )
    .nullish(),
  learn: z
    .union([
      z.boolean(),
      z.strictObject({
        min_samples: z.number().int().min(1).optional(),
        prefer_approval: z.number().min(0).max(1).optional(),
        avoid_rejection: z.number().min(0).max(1).optional(),
        explore: z.boolean().optional(),
      }),
    ])
    .nullish(),
});

export const LimitsSchema = z.record(
  z.string().min(1),
  z.strictObject({
    concurrency: z.number().int().min(1).nullish(),
    requests_per_minute: z.number().positive().nullish(),
  }),
);

export const DEFAULT_LEARN: LearnSettings = {
  enabled: true,
  min_samples: 3,
  prefer_approval: 0.8,
  avoid_rejection: 0.5,
  explore: true,
};

/** A routing setting that names something that does not exist, with where it is. */
export class RoutingConfigError extends Error {
  constructor(
    message: string,
    readonly path: Array<string | number>,
  ) {
    super(message);
  }
}

/** The config with defaults; throws RoutingConfigError naming a tier that does not exist. */
export function normalizeRouting(raw: z.infer<typeof RoutingSchema>): RoutingConfig {
  const tiers: Record<string, Tier> = {};
  for (const [name, t] of Object.entries(raw.tiers)) {
    tiers[name] = { runtime: t.runtime ?? null, model: t.model ?? null, effort: t.effort ?? null };
  }
  const names = Object.keys(tiers);
  if (names.length === 0)
    throw new RoutingConfigError('routing.tiers is empty: name at least one tier', ['tiers']);
  const known = (tier: string, path: Array<string | number>) => {
    if (!tiers[tier]) throw new RoutingConfigError(`no tier '${tier}' (tiers: ${names.join(', ')})`, path);
    return tier;
  };
  const asList = (v: string | string[] | null | undefined) => (v == null ? null : [v].flat());
  const learn = raw.learn;
  return {
    tiers,
    router: raw.router ? { runtime: raw.router.runtime, model: raw.router.model ?? null } : null,
    default: raw.default ? known(raw.default, ['default']) : names[names.length - 1]!,
    rules: (raw.rules ?? []).map((r, i) => ({
      tier: known(r.tier, ['rules', i, 'tier']),
      size: asList(r.size)?.map((s) => s.toUpperCase()) ?? null,
      agents: asList(r.agents),
      labels: asList(r.labels),
      keywords: asList(r.keywords),
    })),
    learn:
      learn === false
        ? { ...DEFAULT_LEARN, enabled: false }
        : { ...DEFAULT_LEARN, ...(typeof learn === 'object' && learn ? learn : {}) },
  };
}

export function normalizeLimits(raw: z.infer<typeof LimitsSchema>): Record<string, ProviderLimit> {
  return Object.fromEntries(
    Object.entries(raw).map(([provider, l]) => [
      provider,
      { concurrency: l.concurrency ?? null, requests_per_minute: l.requests_per_minute ?? null },
    ]),
  );
}
