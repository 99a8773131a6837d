import type { AgentNode } from '../../core/pipeline.js';
import type { RoutingConfig } from '../../core/routing.js';
import type { RouterAdvice } from '../../scheduler/route.js';
import type { TaskState } from '../fold/task-state.js';

/**
 * `routing.router`: a model reads the task and recommends a tier (the rules are used when it
 * cannot say). The question and the reading of its answer; the executor makes the call, under
 * the agent id `_tier_router` (the script's entry under --script).
 */

export function tierRouterPrompt(state: TaskState, node: AgentNode, routing: RoutingConfig): string {
  const tiers = Object.entries(routing.tiers).map(
    ([name, t]) =>
      `- ${name}: ${[t.runtime ?? node.runtime, t.model, t.effort ? `effort ${t.effort}` : null].filter(Boolean).join(' ')}`,
  );
  return [
    'Pick the tier of model for this piece of work: the cheapest one that will do it well.',
    '',
    `Task: ${state.input}`,
    `Task size: ${state.size?.size ?? 'unknown'}`,
    ...(state.labels.length ? [`Labels: ${state.labels.join(', ')}`] : []),
    `Agent: ${node.id} — ${node.system_prompt.replace(/\s+/g, ' ').trim().slice(0, 300)}`,
    '',
    'Tiers, cheapest first:',
    ...tiers,
    '',
    'Answer with two lines:',
    `TIER: <one of ${Object.keys(routing.tiers).join(', ')}>`,
    'REASON: <one sentence>',
  ].join('\n');
}

export function parseTierAdvice(answer: string, tiers: readonly string[]): RouterAdvice {
  const named = /^\s*TIER:\s*([A-Za-z0-9_-]+)/im.exec(answer)?.[1];
  const tier =
    named && tiers.includes(named) ? named : answer.split(/[^A-Za-z0-9_-]+/).find((w) => tiers.includes(w));
  if (!tier) return { error: `no tier in its answer "${answer.trim().slice(0, 80)}"` };
  const reason = /^\s*REASON:\s*(.+)$/im.exec(answer)?.[1]?.trim() ?? 'no reason given';
  return { tier, reason };
}
