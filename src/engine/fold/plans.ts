import type { AgentNode } from '../../core/pipeline.js';
import { activationOf, addActivation } from './activations.js';
import { recordStageInContext, stageOf } from './stage-records.js';
import type { Activation, PieceState, Reducers, TaskState } from './types.js';

/**
 * Plans as task graphs (docs/task-graphs.md): a planner's checked plan becomes pieces, each a
 * lineage of a fan-out group working in its own worktree; the planner's integration activation
 * starts them as their dependencies merge, merges them in dependency order, and hands on once
 * every piece is in. Everything here is a fold of the log, so resume and the dashboard see the
 * same graph.
 */

export type PieceStatus = 'waiting' | 'ready' | 'running' | 'merging' | 'merged' | 'failed';

export const planReducers = {
  plan_expanded(state, event) {
    const planner = activationOf(state, event.activation);
    planner.status = 'done';
    const stage = stageOf(state, event.stage);
    stage.handedOff = true;
    recordStageInContext(state, stage, stage.gate?.decision ?? 'completed');
    const group = `g${++state.counters.group}`;
    state.groups.set(group, { id: group, parentGroup: planner.group, parentLineage: planner.lineage });
    const pieces = new Map(
      [...(state.plan?.pieces.values() ?? [])]
        .filter((p) => pieceStatus(state, p) === 'merged')
        .map((p) => [p.id, p]),
    );
    for (const piece of event.pieces) {
      if (pieces.has(piece.id)) continue;
      const lineage = `l${++state.counters.lineage}`;
      pieces.set(piece.id, {
        ...piece,
        lineage,
        round: event.round,
        started: false,
        failure: null,
        outside: [],
      });
    }
    const integration = addActivation(state, {
      agent: event.agent,
      input: planner.input,
      group: planner.group,
      lineage: planner.lineage,
      origin: { agent: event.agent, stage: event.stage },
    });
    integration.integrates = event.round;
    state.plan = {
      planner: event.agent,
      stage: event.stage,
      round: event.round,
      groups: [...(state.plan?.groups ?? []), group],
      integration: integration.id,
      pieces,
      warnings: event.warnings,
      replans: state.plan?.replans ?? 0,
    };
  },

  piece_started(state, event) {
    const plan = state.plan!;
    const piece = plan.pieces.get(event.piece)!;
    piece.started = true;
    const worker = plannerNode(state)!.plan!.worker;
    addActivation(state, {
      agent: worker,
      input: event.input,
      group: plan.groups[plan.groups.length - 1]!,
      lineage: piece.lineage,
      origin: { agent: plan.planner, stage: plan.stage },
    });
  },

  piece_failed(state, event) {
    const piece = state.plan!.pieces.get(event.piece)!;
    piece.failure = { reason: event.reason, stage: event.stage };
    for (const a of pieceActivations(state, piece)) a.status = 'done';
  },

  piece_outside_paths(state, event) {
    state.plan!.pieces.get(event.piece)!.outside = event.files;
  },

  plan_replanned(state, event) {
    const plan = state.plan!;
    const integration = activationOf(state, plan.integration);
    integration.status = 'done';
    plan.replans++;
    addActivation(state, {
      agent: plan.planner,
      input: event.input,
      group: integration.group,
      lineage: integration.lineage,
      origin: integration.origin,
    });
  },
} satisfies Partial<Reducers>;

/** The agent whose plan the task runs, or null before one expanded. */
export function plannerNode(state: Readonly<TaskState>): AgentNode | null {
  const id = state.plan?.planner;
  const node = id ? state.definition.agents.find((a) => a.id === id) : undefined;
  return node?.type === 'agent' && node.plan ? node : null;
}

/** The activations working on a piece (its worker's, and whatever its handoffs started). */
export function pieceActivations(state: Readonly<TaskState>, piece: PieceState): Activation[] {
  const groups = state.plan?.groups ?? [];
  return [...state.activations.values()].filter(
    (a) => a.lineage === piece.lineage && a.group !== null && groups.includes(a.group),
  );
}

/** The piece the activation of that id works on, or null. */
export function pieceOfActivation(state: Readonly<TaskState>, id: string): PieceState | null {
  const activation = state.activations.get(id);
  return activation ? pieceOf(state, activation) : null;
}

/** The piece an activation works on, or null. */
export function pieceOf(
  state: Readonly<TaskState>,
  activation: Pick<Activation, 'group' | 'lineage'>,
): PieceState | null {
  const plan = state.plan;
  if (!plan || activation.group === null || !plan.groups.includes(activation.group)) return null;
  for (const piece of plan.pieces.values()) if (piece.lineage === activation.lineage) return piece;
  return null;
}

/** A lineage that is a piece's: only its plan's integration merges it. */
export function isPieceLineage(state: Readonly<TaskState>, lineage: string): boolean {
  for (const piece of state.plan?.pieces.values() ?? []) if (piece.lineage === lineage) return true;
  return false;
}

export function pieceStatus(state: Readonly<TaskState>, piece: PieceState): PieceStatus {
  if (piece.failure) return 'failed';
  const ws = state.branchWorkspaces.get(piece.lineage);
  if (ws && (ws.merged || ws.resolved)) return 'merged';
  if (!piece.started) {
    const merged = piece.depends_on.every((d) => {
      const dep = state.plan!.pieces.get(d);
      return dep !== undefined && pieceStatus(state, dep) === 'merged';
    });
    return merged ? 'ready' : 'waiting';
  }
  if (pieceActivations(state, piece).some((a) => a.status !== 'done')) return 'running';
  // a piece that finished without a worktree (no git, or no stage got one) has nothing to merge
  return ws ? 'merging' : 'merged';
}

/** The piece's branch, once its worktree was made. */
export function pieceBranch(state: Readonly<TaskState>, piece: PieceState): string | null {
  return state.branchWorkspaces.get(piece.lineage)?.branch ?? null;
}
