import type { Pipeline, PipelineNode } from '../core/pipeline.js';
import { type CompiledPipeline, locate } from './compiled.js';
import type { DiagnosticSink } from './diagnostics.js';
import { nodesById, reachableFrom } from './lang/graph.js';

/** Agents no run can get to from the entry agent (with `entry_point: auto` any agent can start). */
export function warnUnreachable(compiled: CompiledPipeline, sink: DiagnosticSink): void {
  const { pipeline } = compiled;
  const entry = pipeline.agents[0];
  if (!entry || pipeline.entry_point === 'auto') return;
  const reached = reachableFrom(pipeline, entry.id);
  for (const node of pipeline.agents) {
    if (reached.has(node.id)) continue;
    sink.warning(
      node.source,
      `agent \`${node.id}\` is unreachable from the entry agent \`${entry.id}\``,
      'hand off to it, make it a session participant, or remove it',
    );
  }
}

/**
 * Gate reject loops that cannot end well: once the gate rejects, every path leads back round the
 * loop and no agent on it can ever complete the task, so only max_retries or max_stages stop it.
 * The engine's rules: a rejection follows `on_reject` handoffs (or re-runs the agent when there
 * are none); approval or a pass follows the rest, and a node whose handoffs do not fire ends.
 */
export function warnEndlessRejectLoops(compiled: CompiledPipeline, sink: DiagnosticSink): void {
  const { pipeline } = compiled;
  const graph = HandoffGraph.of(pipeline);
  const finishing = nodesThatCanFinish(pipeline, graph);
  for (const node of pipeline.agents) {
    if (node.type !== 'agent' || !node.gate) continue;
    const onReject = node.handoffs.findIndex((h) => h.condition === 'on_reject');
    const retry =
      onReject >= 0 ? graph.targets(node.handoffs.filter((h) => h.condition === 'on_reject')) : [node.id];
    if (retry.some((id) => finishing.has(id))) continue;
    const loop = pathBetween(graph, retry, node.id);
    if (!loop) continue;
    sink.warning(
      onReject >= 0
        ? locate(compiled, node.id, 'handoffs', onReject, 'to')
        : locate(compiled, node.id, 'gate'),
      `gate reject loop has no exit: after \`${node.id}\` rejects, the task can only go round ${[node.id, ...loop].join(' → ')}`,
      `let approval leave the loop: give \`${node.id}\` an \`on_approve\` handoff out of it (or none, to finish there)`,
    );
  }
}

/**
 * Handoff edges with `*` kept apart: a node with a `*` target leads to every agent, and expanding
 * that for each such node would make the checks quadratic.
 */
class HandoffGraph {
  private constructor(
    readonly pipeline: Pipeline,
    readonly byId: ReadonlyMap<string, PipelineNode>,
    /** Nodes with a `*` target. */
    readonly anywhere: readonly string[],
  ) {}

  static of(pipeline: Pipeline): HandoffGraph {
    const anywhere = pipeline.agents.filter((n) => n.handoffs.some((h) => h.to.includes('*')));
    return new HandoffGraph(
      pipeline,
      nodesById(pipeline),
      anywhere.map((n) => n.id),
    );
  }

  /** The ids these handoffs name, `*` expanded. */
  targets(handoffs: PipelineNode['handoffs']): string[] {
    return handoffs.some((h) => h.to.includes('*'))
      ? this.pipeline.agents.map((a) => a.id)
      : handoffs.flatMap((h) => h.to);
  }

  /** The ids these handoffs name, without `*`. */
  named(handoffs: PipelineNode['handoffs']): string[] {
    return handoffs.flatMap((h) => h.to.filter((t) => t !== '*'));
  }
}

/** Nodes from which some run reaches a node that ends the task: a walk back from those nodes. */
function nodesThatCanFinish(pipeline: Pipeline, graph: HandoffGraph): Set<string> {
  const predecessors = new Map<string, string[]>();
  for (const node of pipeline.agents) {
    for (const target of graph.named(node.handoffs)) {
      const list = predecessors.get(target);
      if (list) list.push(node.id);
      else predecessors.set(target, [node.id]);
    }
  }
  const finishing = new Set<string>();
  const queue: string[] = [];
  const add = (id: string) => {
    if (finishing.has(id)) return;
    finishing.add(id);
    queue.push(id);
  };
  for (const node of pipeline.agents) if (canEnd(node)) add(node.id);
  for (let head = 0; head < queue.length; head++) {
    // a `*` node leads to every agent, so to this one
    if (head === 0) for (const id of graph.anywhere) add(id);
    for (const id of predecessors.get(queue[head]!) ?? []) add(id);
  }
  return finishing;
}

/** A node ends the task when, for some outcome other than rejection, no handoff surely fires. */
function canEnd(node: PipelineNode): boolean {
  const sure =
    node.type === 'agent' && node.gate ? ['always', 'on_approve', 'on_pass'] : ['always', 'on_pass'];
  return !node.handoffs.some((h) => sure.includes(h.condition));
}

/** The shortest handoff path from any of `from` to `to`, ending with `to`. */
function pathBetween(graph: HandoffGraph, from: string[], to: string): string[] | undefined {
  const previous = new Map<string, string | null>(from.map((id) => [id, null]));
  const queue = [...from];
  let everyone = false;
  const visit = (next: string, id: string) => {
    if (previous.has(next)) return;
    previous.set(next, id);
    queue.push(next);
  };
  for (let head = 0; head < queue.length; head++) {
    const id = queue[head]!;
    if (id === to) {
      const path = [id];
      for (let p = previous.get(id); p; p = previous.get(p)) path.unshift(p);
      return path;
    }
    const node = graph.byId.get(id);
    if (!node) continue;
    if (!everyone && node.handoffs.some((h) => h.to.includes('*'))) {
      everyone = true;
      for (const agent of graph.pipeline.agents) visit(agent.id, id);
    }
    for (const next of graph.named(node.handoffs)) visit(next, id);
  }
  return undefined;
}
