import type { PlanSettings } from '../core/pipeline.js';
import { addUsage, type Usage } from '../core/usage.js';
import {
  type PieceState,
  pieceActivations,
  pieceStatus,
  type StageRecord,
  type TaskState,
} from '../engine/fold/task-state.js';
import type { PieceDiff, PieceDiffs } from './piece-diffs.js';

/**
 * A task's plan as a graph (docs/task-graphs.md), the one shape `status --json`, `run --json`
 * and the API's task detail carry (`plan`), and `troupe status` and the dashboard draw: each
 * piece with its status, dependencies, the stages that worked on it, the verifier's verdict, the
 * tier it was routed to, its worktree, its diff, what it used, and what went wrong. Diffs come
 * from git (app/piece-diffs.ts), read by the caller; without them a piece's `diff` is null.
 */
export function planView(state: TaskState, diffs: PieceDiffs = new Map()) {
  const plan = state.plan;
  if (!plan) return null;
  const settings = planSettings(state, plan.planner);
  const levels = pieceLevels([...plan.pieces.values()]);
  return {
    round: plan.round,
    planner: plan.planner,
    worker: settings?.worker ?? null,
    pipeline: settings?.pipeline?.name ?? null,
    verifier: settings?.verifier ?? null,
    replans: plan.replans,
    warnings: [...plan.warnings],
    pieces: [...plan.pieces.values()].map((piece) =>
      pieceView(state, piece, levels.get(piece.id) ?? 0, diffs.get(piece.id) ?? null),
    ),
  };
}

export type PlanView = NonNullable<ReturnType<typeof planView>>;
export type PieceView = PlanView['pieces'][number];

function pieceView(state: TaskState, piece: PieceState, level: number, diff: PieceDiff | null) {
  const activations = new Set(pieceActivations(state, piece).map((a) => a.id));
  const stages = state.stages.filter((s): s is StageRecord => s != null && activations.has(s.activation));
  // the plan judges the stage that ends the piece's chain: the last verdict of an agent without a gate of its own
  const ungated = (agent: string) =>
    state.definition.agents.some((a) => a.id === agent && a.type === 'agent' && !a.gate);
  const judged = stages.findLast((s) => s.gate !== null && s.gate.by !== 'human' && ungated(s.agent));
  const routed = stages.findLast((s) => state.routes[s.n] !== undefined);
  const route = routed ? state.routes[routed.n]! : null;
  const ws = state.branchWorkspaces.get(piece.lineage);
  return {
    id: piece.id,
    goal: piece.goal,
    status: pieceStatus(state, piece),
    depends_on: [...piece.depends_on],
    /** 0 for a piece that depends on none, else one more than its deepest dependency. */
    level,
    paths: [...piece.paths],
    size: piece.size,
    labels: [...piece.labels],
    round: piece.round,
    stages: stages.map((s) => s.n),
    verdict: judged?.gate
      ? { decision: judged.gate.decision, by: judged.gate.by, reason: judged.gate.reason, stage: judged.n }
      : null,
    tier: route
      ? { tier: route.tier, runtime: route.runtime, model: route.model, effort: route.effort }
      : null,
    branch: ws?.branch ?? null,
    worktree: ws?.path ?? null,
    diff,
    usage: stages.reduce<Usage>((total, stage) => addUsage(total, stage.usage), {
      input_tokens: 0,
      output_tokens: 0,
    }),
    outside: [...piece.outside],
    failure: piece.failure ? { ...piece.failure } : null,
  };
}

function planSettings(state: TaskState, planner: string): PlanSettings | null {
  const node = state.definition.agents.find((a) => a.id === planner);
  return node?.type === 'agent' ? (node.plan ?? null) : null;
}

/**
 * Each piece's depth in the graph, without recursion: pieces are taken once all their
 * dependencies have a depth. A dependency the plan does not hold counts for nothing; a piece
 * left on a cycle (a plan never expands with one) gets the depth known so far.
 */
export function pieceLevels(pieces: readonly Pick<PieceState, 'id' | 'depends_on'>[]): Map<string, number> {
  const ids = new Set(pieces.map((p) => p.id));
  const waitingOn = new Map<string, number>();
  const dependents = new Map<string, string[]>();
  const level = new Map<string, number>();
  for (const p of pieces) {
    const deps = [...new Set(p.depends_on)].filter((d) => ids.has(d) && d !== p.id);
    waitingOn.set(p.id, deps.length);
    for (const d of deps) dependents.set(d, [...(dependents.get(d) ?? []), p.id]);
  }
  const ready = pieces.filter((p) => waitingOn.get(p.id) === 0).map((p) => p.id);
  for (const id of ready) level.set(id, 0);
  while (ready.length > 0) {
    const id = ready.pop()!;
    for (const next of dependents.get(id) ?? []) {
      level.set(next, Math.max(level.get(next) ?? 0, level.get(id)! + 1));
      const left = waitingOn.get(next)! - 1;
      waitingOn.set(next, left);
      if (left === 0) ready.push(next);
    }
  }
  for (const p of pieces) if (!level.has(p.id)) level.set(p.id, 0);
  return level;
}
