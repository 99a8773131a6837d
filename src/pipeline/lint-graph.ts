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
 * Handoff loops that nothing can stop: every agent on the loop hands on to the next whatever it
 * writes (`always` or `on_pass`, no gate to reject). Every handoff that holds fires, so a
 * conditional handoff out of such a loop starts a branch beside it and the loop goes on; only
 * the runaway guard (the same output three times) or max_stages ends the task.
 */
export function warnEndlessLoops(compiled: CompiledPipeline, sink: DiagnosticSink): void {
  const { pipeline } = compiled;
  const byId = nodesById(pipeline);
  const sure = new Map(pipeline.agents.map((node) => [node.id, sureTargets(node, byId)]));
  for (const loop of cyclesOf(pipeline.agents, sure)) {
    const members = new Set(loop);
    const first = pipeline.agents.find((n) => members.has(n.id))!;
    const back = first.handoffs.findIndex((h) => isSure(first, h) && h.to.some((t) => members.has(t)));
    const round = cycleThrough(first.id, members, sure);
    const leaves = loop.some((id) => byId.get(id)?.handoffs.some((h) => h.to.some((t) => !members.has(t))));
    sink.warning(
      locate(compiled, first.id, 'handoffs', back, 'to'),
      `handoff loop has no exit: ${shortPath(round)} hand on whatever the output, so the task never ends`,
      [
        `make a handoff of the loop conditional (\`condition: status != done\`) or give one of its agents a gate`,
        leaves ? 'a handoff out of the loop starts a branch beside it, it does not stop it' : '',
      ]
        .filter(Boolean)
        .join('; '),
    );
  }
}

/** Targets a node surely hands on to, once it has run: no gate can reject, no condition can fail. */
function sureTargets(node: PipelineNode, byId: ReadonlyMap<string, PipelineNode>): string[] {
  return node.handoffs.flatMap((h) => (isSure(node, h) ? h.to.filter((t) => byId.has(t)) : []));
}

function isSure(node: PipelineNode, handoff: PipelineNode['handoffs'][number]): boolean {
  // a session hands on only on consensus; a gate only on approval
  if (node.type === 'session' || node.gate) return false;
  return handoff.condition === 'always' || handoff.condition === 'on_pass';
}

/**
 * The strongly connected components of `edges` that hold a cycle (two nodes or more, or one with an
 * edge to itself), in pipeline order. Tarjan's algorithm, iterative: a pipeline may have tens of
 * thousands of agents.
 */
function cyclesOf(nodes: readonly PipelineNode[], edges: ReadonlyMap<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let counter = 0;
  for (const root of nodes) {
    if (index.has(root.id)) continue;
    const work: { id: string; next: number }[] = [{ id: root.id, next: 0 }];
    index.set(root.id, counter);
    low.set(root.id, counter++);
    stack.push(root.id);
    onStack.add(root.id);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const out = edges.get(frame.id) ?? [];
      if (frame.next < out.length) {
        const to = out[frame.next++]!;
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          work.push({ id: to, next: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.id, Math.min(low.get(frame.id)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.id, Math.min(low.get(parent.id)!, low.get(frame.id)!));
      if (low.get(frame.id) !== index.get(frame.id)) continue;
      const component: string[] = [];
      for (let id = stack.pop(); id !== undefined; id = stack.pop()) {
        onStack.delete(id);
        component.push(id);
        if (id === frame.id) break;
      }
      if (component.length > 1 || out.includes(frame.id)) found.push(component);
    }
  }
  const order = new Map(nodes.map((n, i) => [n.id, i]));
  const firstOf = (c: string[]) => c.reduce((min, id) => Math.min(min, order.get(id)!), Infinity);
  return found.sort((a, b) => firstOf(a) - firstOf(b));
}

/** A shortest way round from `start` back to it, inside `members`. */
function cycleThrough(
  start: string,
  members: ReadonlySet<string>,
  edges: ReadonlyMap<string, string[]>,
): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const id = queue[head]!;
    for (const next of edges.get(id) ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [start];
        for (let p: string | undefined = id; p !== undefined && p !== start; p = previous.get(p))
          path.unshift(p);
        return [start, ...path];
      }
      if (!previous.has(next)) {
        previous.set(next, id);
        queue.push(next);
      }
    }
  }
  return [start, start];
}

function shortPath(ids: string[]): string {
  const shown = ids.length > 8 ? [...ids.slice(0, 4), '…', ...ids.slice(-3)] : ids;
  return shown.map((id) => (id === '…' ? id : `\`${id}\``)).join(' → ');
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
