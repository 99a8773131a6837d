import type { Effort } from './pipeline-vocabulary.js';
import type { GateRuntime } from './runtimes.js';

/**
 * `routing:` and `limits:` in .troupe/config.yaml, normalized: the named tiers an agent with
 * `model: auto` or `effort: auto` is routed to, the rules that recommend one, how history may
 * change the choice, and per-provider caps. docs/routing.md explains the policy.
 */

export interface Tier {
  /** null: the agent's own runtime. */
  runtime: GateRuntime | null;
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
  runtime: GateRuntime;
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
