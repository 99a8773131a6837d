import type { TaskErrorKind } from '../../core/events.js';
import type { AgentNode, Gate } from '../../core/pipeline.js';
import { readPlan } from '../../pipeline/lang/plan.js';
import {
  type Activation,
  branchLineage,
  type PieceState,
  pieceActivations,
  pieceBranch,
  pieceOf,
  pieceOfActivation,
  pieceStatus,
  plannerNode,
  type StageRecord,
  type TaskState,
} from '../fold/task-state.js';
import { resolveHandoffs } from './handoffs.js';
import type { Step } from './plan.js';

/**
 * The planner's part for plans (docs/task-graphs.md), pure like the rest of plan/: a planner's
 * checked plan is expanded; its integration activation starts each piece once the pieces it
 * depends on are merged (at most `plan.concurrency` at once), merges each finished piece into
 * the task branch, re-plans around failed pieces, and hands on as the planner would once every
 * piece is in.
 */

/**
 * How many checkouts a plan wants made ahead (core/task-workspace.ts `keepCheckoutsReady`), so a
 * piece's worktree and its verifier's checkout are not made on the graph's critical path: while a
 * planner works, one for each piece that may start at once; while its graph runs, one for each
 * piece still to start and one for each running piece to verify, each at most `concurrency` (the
 * pieces whose worktree is made already count against the first).
 */
export function checkoutsAhead(state: Readonly<TaskState>): number {
  if (!state.workspace || state.status !== 'running') return 0;
  const plan = state.plan;
  if (plan && state.activations.get(plan.integration)?.status !== 'done') {
    const settings = plannerNode(state)!.plan!;
    let toStart = 0;
    let prepared = 0;
    let running = 0;
    for (const piece of plan.pieces.values()) {
      const status = pieceStatus(state, piece);
      if (status === 'waiting' || status === 'ready') toStart++;
      if (status === 'ready' && worktreeMade(state, piece)) prepared++;
      if (status === 'running') running++;
    }
    // pieces whose worktree is made already need no checkout: at most `concurrency` ahead in all
    const toPrepare = Math.max(0, Math.min(settings.concurrency, toStart) - prepared);
    const toVerify = settings.verifier || settings.checks === 'run' ? running : 0;
    return toPrepare + Math.min(settings.concurrency, toVerify);
  }
  for (const activation of state.activations.values()) {
    if (activation.status === 'done' || activation.integrates !== null) continue;
    const node = state.definition.agents.find((a) => a.id === activation.agent);
    if (node?.type === 'agent' && node.plan) return node.plan.concurrency;
  }
  return 0;
}

/**
 * The piece whose worktree this activation waits for (a piece's first stage, in a task with a
 * worktree: planGraph made it ahead, or it is made now), or null.
 */
export function pieceToPrepare(state: Readonly<TaskState>, activation: Activation): string | null {
  const piece = pieceOf(state, activation);
  if (!piece || !ownWorktrees(state)) return null;
  return worktreeMade(state, piece) ? null : piece.id;
}

/** The piece's worktree is made (and recorded): ahead of its start, or since it started. */
function worktreeMade(state: Readonly<TaskState>, piece: PieceState): boolean {
  return state.branchWorkspaces.has(piece.lineage);
}

/**
 * A plan's pieces each work in a worktree of their own, in a task with one: unless the planner is
 * itself on a fan-out's branch, whose worktree they share.
 */
function ownWorktrees(state: Readonly<TaskState>): boolean {
  const group = state.plan && state.groups.get(state.plan.groups.at(-1)!);
  return state.workspace !== null && group?.parentGroup === null;
}

/** The planner's stage passed its checks: its plan becomes the task's graph. */
export function expandPlan(state: TaskState, activation: Activation, node: AgentNode): Step {
  const stage = state.stages[activation.stage! - 1]!;
  const merged = new Set(
    [...(state.plan?.pieces.values() ?? [])]
      .filter((p) => pieceStatus(state, p) === 'merged')
      .map((p) => p.id),
  );
  const read = readPlan(stage.output, merged);
  // the output check already refused a plan that does not read: this is the same reading
  if ('errors' in read)
    return fail(`the plan of ${node.id} does not validate: ${read.errors[0]}`, stage.n, 'gate_rejected');
  return {
    kind: 'expand_plan',
    stage: stage.n,
    activation: activation.id,
    agent: node.id,
    round: (state.plan?.round ?? 0) + 1,
    pieces: read.pieces,
    warnings: read.warnings,
  };
}

/** What the integration activation does next: merge, start, hand on, re-plan, fail, or wait. */
export function planGraph(state: TaskState, activation: Activation, node: AgentNode): Step | null {
  const plan = state.plan!;
  const settings = node.plan!;
  const into = branchLineage(state, activation);
  const conflict = activation.conflict;
  if (conflict && !conflict.handled) return null;
  if (conflict) {
    return {
      kind: 'merge_branches',
      activation: activation.id,
      agent: node.id,
      into,
      branches: [],
      resolved: conflict.branch,
    };
  }
  const pieces = [...plan.pieces.values()];
  const status = new Map(pieces.map((p) => [p.id, pieceStatus(state, p)]));
  const running = pieces.filter((p) => status.get(p.id) === 'running').length;
  const readyPieces = pieces.filter((p) => status.get(p.id) === 'ready');
  const prepared = readyPieces.filter((p) => worktreeMade(state, p));
  // a piece ready to start goes first (one whose worktree is made, before the rest): it waits on
  // nothing still merging (a merge in flight would hold it back for no reason)
  const ready = prepared[0] ?? readyPieces[0];
  if (ready && running < settings.concurrency)
    return { kind: 'start_piece', piece: ready.id, input: pieceInput(state, ready) };
  // every finished piece goes in at once, in plan order (none of them depends on another: a
  // piece starts only once what it depends on is merged): one merge, one move of the branch
  const finished = pieces.filter((p) => status.get(p.id) === 'merging');
  if (finished.length > 0) {
    return {
      kind: 'merge_branches',
      activation: activation.id,
      agent: node.id,
      into,
      branches: finished.map((p) => pieceBranch(state, p)!),
      resolved: null,
      pieces: finished.map((p) => p.id),
    };
  }
  // with every place taken, the next pieces' worktrees are made while the running ones work (at
  // most `concurrency` ahead, one at a time, once every running piece has its own), so a place
  // that frees goes straight to a worker
  if (ready) {
    const next = readyPieces.find((p) => !worktreeMade(state, p));
    const waiting = pieces.some((p) => status.get(p.id) === 'running' && !worktreeMade(state, p));
    return next && !waiting && prepared.length < settings.concurrency && ownWorktrees(state)
      ? { kind: 'prepare_piece', piece: next.id }
      : null;
  }
  if (pieces.every((p) => status.get(p.id) === 'merged')) {
    const stage = state.stages[plan.stage - 1]!;
    const targets = resolveHandoffs(state.definition, node, stage, [], null);
    return { kind: 'handoff', stage: stage.n, activation: activation.id, targets };
  }
  if (running > 0) return null;
  const failed = pieces.filter((p) => status.get(p.id) === 'failed');
  const blocked = pieces.filter((p) => status.get(p.id) === 'waiting').map((p) => p.id);
  if (plan.replans < settings.replans) {
    return {
      kind: 'replan',
      round: plan.round,
      failed: failed.map((p) => p.id),
      input: replanInput(state, activation, failed, blocked),
    };
  }
  const reasons = failed.map((p) => `${p.id} (${firstLine(p.failure?.reason ?? 'failed')})`).join('; ');
  const waited = blocked.length ? `; ${blocked.join(', ')} waited on them` : '';
  return fail(
    `piece${failed.length === 1 ? '' : 's'} ${reasons} failed${waited}; ${settings.replans} re-plan${settings.replans === 1 ? '' : 's'} used`,
    null,
    'pieces_failed',
  );
}

/**
 * Whether this settled stage ends its piece's chain: it is a piece's, and without a verdict it
 * would hand on to no one. Only then is the piece judged — with a worker that hands off inside
 * its piece, or a sub-pipeline, the piece is judged once its last stage has run, on its final
 * commit. An agent with a gate of its own is judged by that gate instead.
 */
export function endsPiece(
  state: TaskState,
  activation: Activation,
  node: AgentNode,
  stage: StageRecord,
): boolean {
  if (node.gate || !pieceOfActivation(state, activation.id) || !plannerNode(state)) return false;
  const unjudged = { ...stage, gate: null };
  return resolveHandoffs(state.definition, node, unjudged, activation.branches, null).length === 0;
}

/**
 * The plan's gate on a piece (when its chain ends: endsPiece): the plan's verifier judges it in
 * a fresh checkout of its commit, with its acceptance checks run first as a command gate when
 * `plan.checks: run`; null when there is neither.
 */
export function pieceGate(state: TaskState, activation: string): Gate | null {
  const piece = pieceOfActivation(state, activation);
  const planner = piece && plannerNode(state);
  if (!piece || !planner) return null;
  const runsChecks = planner.plan!.checks === 'run' && piece.checks.length > 0;
  const verifier = planner.plan!.verifier;
  if (!verifier && !runsChecks) return null;
  return {
    type: verifier ? 'llm' : 'command',
    prompt: verifier ? PIECE_GATE_PROMPT : '',
    model: null,
    max_retries: DEFAULT_PIECE_RETRIES,
    command: runsChecks ? piece.checks.join(' && ') : null,
    verifier,
    timeout: null,
  };
}

/** A rejection by a gate (the plan's, on a stage that ended its piece), not by a person or a schema check. */
export function rejectedByGate(gate: StageRecord['gate']): boolean {
  return gate?.decision === 'rejected' && ['llm', 'command', 'script'].includes(gate.by);
}

/** The plan's rejections of a piece so far: gates' rejections of its agents without a gate of their own. */
export function pieceRejections(state: Readonly<TaskState>, piece: PieceState): number {
  const activations = new Set(pieceActivations(state, piece).map((a) => a.id));
  return state.stages.filter((s) => {
    if (!activations.has(s.activation) || !rejectedByGate(s.gate)) return false;
    const node = state.definition.agents.find((a) => a.id === s.agent);
    return node?.type === 'agent' && !node.gate;
  }).length;
}

/**
 * A rejected piece whose chain ended past its first agent goes back to that agent, with the
 * piece as it was given and the reason: it is the one told the goal, and the agents after it
 * run again on what it changes.
 */
export function pieceRetry(
  state: Readonly<TaskState>,
  activation: Activation,
  stage: StageRecord,
): Step | null {
  const piece = pieceOfActivation(state, activation.id);
  const entry = plannerNode(state)?.plan?.worker;
  if (!piece || !entry || entry === stage.agent || stage.gate?.decision !== 'rejected') return null;
  const first = pieceActivations(state, piece).find((a) => a.agent === entry);
  const input = [
    first?.input ?? pieceInput(state, piece),
    '',
    '--- Gate Rejection ---',
    stage.gate.reason,
    '',
    `--- Previous Output (${stage.agent}, the piece's last stage) ---`,
    stage.output,
  ].join('\n');
  return {
    kind: 'handoff',
    stage: stage.n,
    activation: activation.id,
    targets: [{ agent: entry, input, condition: 'gate_retry' }],
  };
}

/** Times a piece's worker is sent back by its verifier or checks before the piece fails. */
export const DEFAULT_PIECE_RETRIES = 3;

/** Rendered with `piece` as a variable: the planner's text is data, never template syntax. */
const PIECE_GATE_PROMPT = `You verify one piece of a larger task. You did not write it: judge the commit in this checkout.

Piece {{ piece.id }}: {{ piece.goal }}
It may change only: {{ piece.paths | join(", ") }}
{% if piece.checks.length %}Acceptance checks (run them): {{ piece.checks | join(" ; ") }}
{% endif %}
Approve only if the goal is met, the changes stay within those paths, and the checks pass. Say what is wrong otherwise.`;

/** What a piece's worker is told: its piece, its bounds, and the task it is part of. */
export function pieceInput(state: Readonly<TaskState>, piece: PieceState): string {
  const plan = state.plan!;
  const others = [...plan.pieces.values()].filter((p) => p.id !== piece.id);
  return [
    `You build one piece of a larger task, in a git worktree of your own; troupe commits what you leave.`,
    '',
    `Piece: ${piece.id}`,
    `Goal: ${piece.goal}`,
    `Change only: ${piece.paths.join(', ')}`,
    piece.checks.length ? `Acceptance checks: ${piece.checks.join(' ; ')}` : 'Acceptance checks: none given',
    piece.depends_on.length
      ? `Built on: ${piece.depends_on.join(', ')} (their work is already merged into your worktree)`
      : 'Built on: the task branch as it is',
    '',
    'Other pieces (other workers build them; do not):',
    ...(others.length
      ? others.map((p) => `- ${p.id}: ${firstLine(p.goal)} (${p.paths.join(', ')})`)
      : ['- none']),
    '',
    'The whole task:',
    state.input,
  ].join('\n');
}

function replanInput(
  state: Readonly<TaskState>,
  activation: Activation,
  failed: PieceState[],
  blocked: string[],
): string {
  const merged = [...state.plan!.pieces.values()]
    .filter((p) => pieceStatus(state, p) === 'merged')
    .map((p) => p.id);
  return [
    activation.input,
    '',
    `--- Re-plan (round ${state.plan!.round + 1}) ---`,
    'These pieces failed:',
    ...failed.map((p) => `- ${p.id}: ${p.failure?.reason ?? 'failed'}`),
    blocked.length ? `Not started (they waited on a failed piece): ${blocked.join(', ')}` : '',
    merged.length
      ? `Already merged (do not plan them again; pieces may depend on them): ${merged.join(', ')}`
      : 'Nothing is merged yet.',
    'Write a plan for the work that is left, as {"pieces": [...]}.',
  ]
    .filter((line, i, all) => line !== '' || all[i - 1] !== '')
    .join('\n');
}

/** Failures that stay with their piece; the rest (the task's stages or budget spent) end the task. */
export function failsOnlyThePiece(kind: TaskErrorKind | null): boolean {
  return kind !== 'max_stages' && kind !== 'budget';
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0]!.slice(0, 200);
}

function fail(reason: string, stage: number | null, errorKind: TaskErrorKind | null): Step {
  return { kind: 'fail', reason, stage, errorKind };
}
