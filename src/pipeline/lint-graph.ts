import type { Pipeline, PipelineNode } from '../core/pipeline.js';
import { type CompiledPipeline, locate } from './compiled.js';
import type { DiagnosticSink } from './diagnostics.js';
import { reachableFrom } from './lang/graph.js';

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
  const finishing = nodesThatCanFinish(pipeline);
  for (const node of pipeline.agents) {
    if (node.type !== 'agent' || !node.gate) continue;
    const onReject = node.handoffs.findIndex((h) => h.condition === 'on_reject');
    const retry =
      onReject >= 0
        ? targets(
            pipeline,
            node.handoffs.filter((h) => h.condition === 'on_reject'),
          )
        : [node.id];
    if (retry.some((id) => finishing.has(id))) continue;
    const loop = pathBetween(pipeline, retry, node.id);
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

/** Nodes from which some run reaches a node that ends the task. */
function nodesThatCanFinish(pipeline: Pipeline): Set<string> {
  const finishing = new Set(pipeline.agents.filter(canEnd).map((n) => n.id));
  for (let grew = true; grew; ) {
    grew = false;
    for (const node of pipeline.agents) {
      if (finishing.has(node.id) || !targets(pipeline, node.handoffs).some((id) => finishing.has(id)))
        continue;
      finishing.add(node.id);
      grew = true;
    }
  }
  return finishing;
}

/** A node ends the task when, for some outcome other than rejection, no handoff surely fires. */
function canEnd(node: PipelineNode): boolean {
  const sure =
    node.type === 'agent' && node.gate ? ['always', 'on_approve', 'on_pass'] : ['always', 'on_pass'];
  return !node.handoffs.some((h) => sure.includes(h.condition));
}

function targets(pipeline: Pipeline, handoffs: PipelineNode['handoffs']): string[] {
  return handoffs.flatMap((h) => (h.to.includes('*') ? pipeline.agents.map((a) => a.id) : h.to));
}

/** The shortest handoff path from any of `from` to `to`, ending with `to`. */
function pathBetween(pipeline: Pipeline, from: string[], to: string): string[] | undefined {
  const previous = new Map<string, string | null>(from.map((id) => [id, null]));
  const queue = [...from];
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    if (id === to) {
      const path = [id];
      for (let p = previous.get(id); p; p = previous.get(p)) path.unshift(p);
      return path;
    }
    const node = pipeline.agents.find((a) => a.id === id);
    for (const next of node ? targets(pipeline, node.handoffs) : []) {
      if (!previous.has(next)) {
        previous.set(next, id);
        queue.push(next);
      }
    }
  }
  return undefined;
}
