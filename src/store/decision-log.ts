import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { EventOf } from '../core/events.js';
import type { RouteOutcome } from '../scheduler/route-history.js';

/**
 * `.troupe/decisions.jsonl`: the decision log for people, one JSON object a line — each choice
 * the scheduler made (a routed tier, a fallback) when it is made, and each routed stage's outcome
 * when its task ends. The event store stays the source of truth (`troupe decisions` reads it);
 * lines are appended whole, so several processes can share the file.
 */

export type DecisionLog = (line: Record<string, unknown>) => void;

export function decisionLogFile(root: string): string {
  return join(root, '.troupe', 'decisions.jsonl');
}

export function fileDecisionLog(root: string): DecisionLog {
  const file = decisionLogFile(root);
  return (line) => {
    mkdirSync(dirname(file), { recursive: true });
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  };
}

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
