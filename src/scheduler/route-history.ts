import type { StoredEvent } from '../core/events.js';
import type { TierRecord } from './route.js';

/**
 * The outcomes of routing decisions, read from the event log: each routed stage with its tokens,
 * cost, duration, runtime retries and its gate's verdict. Nothing extra is recorded for an
 * outcome, so a verdict a person gives later (a human gate) counts as well.
 */

export interface RouteOutcome {
  taskId: string;
  stage: number;
  agent: string;
  kind: string;
  tier: string;
  recommended: string;
  overrides: string[];
  reason: string;
  at: string;
  tokens: number;
  costUsd: number;
  durationMs: number;
  /** null: not judged (no gate, or not yet). */
  verdict: 'approved' | 'rejected' | null;
  retries: number;
  completed: boolean;
}

/** The event types an outcome is made of (what a store needs to read for routing). */
export const ROUTE_EVENT_TYPES = [
  'decision',
  'stage_completed',
  'stage_attempt_failed',
  'gate_decided',
] as const;

export function routeOutcomes(events: Iterable<StoredEvent>): RouteOutcome[] {
  const byStage = new Map<string, RouteOutcome>();
  for (const event of events) {
    const key = `${event.taskId}#${'stage' in event ? event.stage : ''}`;
    if (event.type === 'decision') {
      if (event.kind !== 'route') continue;
      byStage.set(key, {
        taskId: event.taskId,
        stage: event.stage,
        agent: event.agent,
        kind: event.taskKind,
        tier: event.tier,
        recommended: event.recommended.tier,
        overrides: event.overrides,
        reason: event.reason,
        at: event.at,
        tokens: 0,
        costUsd: 0,
        durationMs: 0,
        verdict: null,
        retries: 0,
        completed: false,
      });
      continue;
    }
    const outcome = byStage.get(key);
    if (!outcome) continue;
    if (event.type === 'stage_completed') {
      const u = event.usage;
      outcome.tokens = u.input_tokens + u.output_tokens + (u.cache_read_tokens ?? 0);
      outcome.costUsd = u.cost_usd ?? 0;
      outcome.durationMs = event.durationMs;
      outcome.completed = true;
    } else if (event.type === 'stage_attempt_failed') outcome.retries++;
    else if (event.type === 'gate_decided') outcome.verdict = event.decision;
  }
  return [...byStage.values()];
}

/** Judged outcomes per tier for one kind of task: what the policy learns from. */
export function tierRecords(outcomes: readonly RouteOutcome[], kind: string): Record<string, TierRecord> {
  const records: Record<string, TierRecord> = {};
  for (const o of outcomes) {
    if (o.kind !== kind || o.verdict === null) continue;
    records[o.tier] ??= { approved: 0, rejected: 0 };
    records[o.tier]![o.verdict]++;
  }
  return records;
}

export interface TierSummary {
  tier: string;
  kind: string;
  stages: number;
  approved: number;
  rejected: number;
  tokens: number;
  costUsd: number;
  durationMs: number;
  retries: number;
}

/** Totals per tier and kind of task, for `troupe decisions`. */
export function summarizeOutcomes(outcomes: readonly RouteOutcome[]): TierSummary[] {
  const rows = new Map<string, TierSummary>();
  for (const o of outcomes) {
    const key = `${o.tier}\u0000${o.kind}`;
    const row = rows.get(key) ?? {
      tier: o.tier,
      kind: o.kind,
      stages: 0,
      approved: 0,
      rejected: 0,
      tokens: 0,
      costUsd: 0,
      durationMs: 0,
      retries: 0,
    };
    row.stages++;
    if (o.verdict) row[o.verdict]++;
    row.tokens += o.tokens;
    row.costUsd += o.costUsd;
    row.durationMs += o.durationMs;
    row.retries += o.retries;
    rows.set(key, row);
  }
  return [...rows.values()].sort((a, b) => a.kind.localeCompare(b.kind) || a.tier.localeCompare(b.tier));
}
