import type { EventOf } from '../core/events.js';
import type { RouteOutcome } from './route-history.js';

/**
 * The lines of `.troupe/decisions.jsonl`, the decision log for people: each choice the scheduler
 * made (a routed tier, a fallback) and each routed stage's outcome. Where they go is the
 * adapter's business (store/decision-log.ts appends them to the file).
 */
export type DecisionLog = (line: Record<string, unknown>) => void;

export function decisionLine(
  taskId: string,
  at: string,
  event: EventOf<'decision'>,
): Record<string, unknown> {
  const { type, ...rest } = event;
  return { type, at, task: taskId, ...rest };
}

export function outcomeLine(outcome: RouteOutcome): Record<string, unknown> {
  return {
    type: 'outcome',
    task: outcome.taskId,
    stage: outcome.stage,
    agent: outcome.agent,
    task_kind: outcome.kind,
    tier: outcome.tier,
    tokens: outcome.tokens,
    cost_usd: outcome.costUsd,
    duration_ms: outcome.durationMs,
    verdict: outcome.verdict,
    retries: outcome.retries,
    completed: outcome.completed,
  };
}
