import type { Pipeline, PipelineNode } from '../../core/pipeline.js';

/** Which agents each agent can lead to, through handoffs and sessions (`*` leads anywhere). */
export function successors(pipeline: Pipeline, node: PipelineNode): string[] {
  const next = new Set<string>();
  for (const handoff of node.handoffs) {
    for (const target of handoff.to) {
      if (target === '*') for (const agent of pipeline.agents) next.add(agent.id);
      else next.add(target);
    }
  }
  if (node.type === 'agent' && node.gate?.verifier) next.add(node.gate.verifier);
  if (node.on_conflict) next.add(node.on_conflict);
  if (node.type === 'session') {
    for (const participant of node.participants) next.add(participant);
    if (node.summary_agent) next.add(node.summary_agent);
  }
  return [...next];
}

const reachCache = new WeakMap<Pipeline, Map<string, Set<string>>>();

/** Every agent reachable from `from` in one or more steps, plus `from` itself. */
export function reachableFrom(pipeline: Pipeline, from: string): Set<string> {
  const perPipeline = reachCache.get(pipeline) ?? new Map<string, Set<string>>();
  reachCache.set(pipeline, perPipeline);
  const cached = perPipeline.get(from);
  if (cached) return cached;
  const seen = new Set<string>([from]);
  const queue = [from];
  for (let id = queue.pop(); id !== undefined; id = queue.pop()) {
    const node = pipeline.agents.find((a) => a.id === id);
    if (!node) continue;
    for (const next of successors(pipeline, node)) {
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  perPipeline.set(from, seen);
  return seen;
}

export function canReach(pipeline: Pipeline, from: string, to: string): boolean {
  return reachableFrom(pipeline, from).has(to);
}
