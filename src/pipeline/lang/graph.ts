import type { Pipeline, PipelineNode } from '../../core/pipeline.js';

/** Which agents each agent can lead to, through handoffs and sessions (`*` leads anywhere). */
export function successors(pipeline: Pipeline, node: PipelineNode): string[] {
  const next = new Set<string>();
  if (leadsAnywhere(node)) for (const agent of pipeline.agents) next.add(agent.id);
  for (const id of namedSuccessors(node)) next.add(id);
  return [...next];
}

/** True when a handoff of the node names `*`. */
export function leadsAnywhere(node: PipelineNode): boolean {
  return node.handoffs.some((h) => h.to.includes('*'));
}

/** The successors the node names (everything but `*`). */
function namedSuccessors(node: PipelineNode): string[] {
  const next = node.handoffs.flatMap((h) => h.to.filter((t) => t !== '*'));
  if (node.type === 'agent' && node.gate?.verifier) next.push(node.gate.verifier);
  if (node.type === 'agent' && node.plan) {
    next.push(node.plan.worker);
    if (node.plan.verifier) next.push(node.plan.verifier);
  }
  if (node.on_conflict) next.push(node.on_conflict);
  if (node.type === 'session') {
    next.push(...node.participants);
    if (node.summary_agent) next.push(node.summary_agent);
  }
  return next;
}

const indexCache = new WeakMap<Pipeline, ReadonlyMap<string, PipelineNode>>();

/** The pipeline's nodes by id (the first of a duplicated id), built once per pipeline. */
export function nodesById(pipeline: Pipeline): ReadonlyMap<string, PipelineNode> {
  let index = indexCache.get(pipeline);
  if (!index) {
    const byId = new Map<string, PipelineNode>();
    for (const node of pipeline.agents) if (!byId.has(node.id)) byId.set(node.id, node);
    index = byId;
    indexCache.set(pipeline, index);
  }
  return index;
}

const reachCache = new WeakMap<Pipeline, Map<string, Set<string>>>();

/** Every agent reachable from `from` in one or more steps, plus `from` itself. */
export function reachableFrom(pipeline: Pipeline, from: string): Set<string> {
  const perPipeline = reachCache.get(pipeline) ?? new Map<string, Set<string>>();
  reachCache.set(pipeline, perPipeline);
  const cached = perPipeline.get(from);
  if (cached) return cached;
  const byId = nodesById(pipeline);
  const seen = new Set<string>([from]);
  const queue = [from];
  const visit = (next: string) => {
    if (seen.has(next)) return;
    seen.add(next);
    queue.push(next);
  };
  // `*` adds every agent: once is enough, however many nodes say it
  let everyone = false;
  for (let id = queue.pop(); id !== undefined; id = queue.pop()) {
    const node = byId.get(id);
    if (!node) continue;
    if (!everyone && leadsAnywhere(node)) {
      everyone = true;
      for (const agent of pipeline.agents) visit(agent.id);
    }
    for (const next of namedSuccessors(node)) visit(next);
  }
  perPipeline.set(from, seen);
  return seen;
}

export function canReach(pipeline: Pipeline, from: string, to: string): boolean {
  return reachableFrom(pipeline, from).has(to);
}
