import { z } from 'zod';
import { TroupeError } from '../core/errors.js';
import { EFFORTS } from '../core/pipeline-vocabulary.js';
import type { LearnSettings, ProviderLimit, RoutingConfig, Tier } from '../core/routing.js';
import { GATE_RUNTIMES } from '../core/runtimes.js';

/**
 * `routing:` and `limits:` in .troupe/config.yaml: the named tiers an agent with `model: auto` or
 * `effort: auto` is routed to, the rules that recommend one, how history may change the choice,
 * and per-provider caps. docs/routing.md explains the policy.
 */

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
export class RoutingConfigError extends TroupeError {
  readonly code = 'routing_config_invalid';
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
