import {
  type EventOf,
  type HandoffTarget,
  isTerminal,
  type SessionTurn,
  type TaskErrorKind,
  type TaskEventType,
} from '../../core/events.js';
import {
  type AgentNode,
  findNode,
  type Pipeline,
  type PipelineNode,
  type SessionNode,
} from '../../core/pipeline.js';
import { parseHumanInputQuestions } from '../../pipeline/lang/directives.js';
import { canReach, successors } from '../../pipeline/lang/graph.js';
import { TemplateError } from '../../pipeline/lang/template.js';
import {
  type Activation,
  type BranchWorkspace,
  branchLineage,
  isPieceLineage,
  lineageIn,
  openActivations,
  pieceOf,
  type TaskState,
} from '../fold/task-state.js';
import {
  endsPiece,
  expandPlan,
  failsOnlyThePiece,
  pieceGate,
  pieceRejections,
  pieceRetry,
  pieceToPrepare,
  planGraph,
  rejectedByGate,
} from './graph-plan.js';
import { resolveHandoffs } from './handoffs.js';
import { retryAfter } from './retry-policy.js';
import { planSession } from './session-plan.js';

/**
 * The planner: given a task's state, what happens next. Pure — no I/O, no clock — so every
 * routing, gate, retry and fan-out rule is testable with a plain object. The executor
 * performs the steps and appends their events; then it asks again.
 */
/** An event's fields without its `type`: what a step that records it as it is carries. */
type EventBody<T extends TaskEventType> = Omit<EventOf<T>, 'type'>;

export type Step =
  | {
      kind: 'start_stage';
      activation: string;
      agent: string;
      stage: number;
      attempt: number;
      input: string;
      /** ISO time; the executor waits until then (retry backoff). */
      notBefore: string | null;
      /** A session turn: `activation` is the session's, `agent` the speaker. */
      turn?: SessionTurn;
    }
  // the session steps record their event as it is
  | ({ kind: 'start_session' } & EventBody<'session_started'>)
  | ({ kind: 'end_round' } & EventBody<'session_round_ended'>)
  | ({ kind: 'end_session' } & EventBody<'session_ended'>)
  | {
      kind: 'ask_human';
      activation: string;
      agent: string;
      stage: number | null;
      mode: 'before' | 'on_demand' | 'merge_conflict';
      questions: string[];
    }
  /**
   * Fan-out branches in worktrees: merge `branches` into the worktree of `into` (a lineage, or
   * null: the task's) before the join `activation` runs (null: before the task completes);
   * `resolved` is a branch whose conflict was resolved by hand.
   */
  | {
      kind: 'merge_branches';
      activation: string | null;
      agent: string | null;
      into: string | null;
      branches: string[];
      resolved: string | null;
      /** A plan's pieces: their paths are checked before their branches merge. */
      pieces?: string[];
    }
  /** A planner's checked plan becomes the task's graph (docs/task-graphs.md). */
  | ({ kind: 'expand_plan' } & EventBody<'plan_expanded'>)
  | { kind: 'start_piece'; piece: string; input: string }
  /** A piece's worktree is made: ahead of its start (graph-plan.ts), or before its worker's first stage. */
  | { kind: 'prepare_piece'; piece: string }
  | { kind: 'fail_piece'; piece: string; reason: string; stage: number | null }
  | ({ kind: 'replan' } & EventBody<'plan_replanned'>)
  /** The `on_conflict` agent's stage is done: its join goes on. */
  | { kind: 'conflict_handled'; activation: string; resolver: string; stage: number }
  /** A mailbox agent's reply was taken off the bus: its stage completes with it. */
  | { kind: 'finish_mailbox_stage'; activation: string; agent: string; stage: number }
  /** `piece`: the gate is the plan's, on the stage that ends that piece's chain (graph-plan.ts, pieceGate). */
  | { kind: 'evaluate_gate'; stage: number; agent: string; gate: 'llm' | 'command'; piece?: string }
  | { kind: 'await_gate'; stage: number; agent: string }
  | { kind: 'handoff'; stage: number; activation: string; targets: HandoffTarget[] }
  | { kind: 'join'; agent: string; activations: string[] }
  | { kind: 'route_entry' }
  | { kind: 'budget_warning'; used: number; limit: number; unit: 'tokens' | 'usd' }
  /** Worker != tester: the task's last commit is judged by a verifier before it can complete. */
  | { kind: 'verify_final'; sha: string; agent: string }
  | { kind: 'complete' }
  | { kind: 'fail'; reason: string; stage: number | null; errorKind: TaskErrorKind | null };

export type StepKind = Step['kind'];
export type StepOf<K extends StepKind> = Extract<Step, { kind: K }>;

export function stepKey(step: Step): string {
  switch (step.kind) {
    case 'start_stage':
    case 'finish_mailbox_stage':
    case 'ask_human':
    case 'handoff':
    case 'start_session':
    case 'end_round':
    case 'end_session':
      return `${step.kind}:${step.activation}`;
    case 'evaluate_gate':
    case 'await_gate':
      return `${step.kind}:${step.stage}`;
    case 'join':
      return `join:${step.activations.join(',')}`;
    case 'merge_branches':
      return `merge_branches:${step.activation ?? 'end'}`;
    case 'conflict_handled':
      return `conflict_handled:${step.resolver}`;
    case 'expand_plan':
      return `expand_plan:${step.activation}`;
    case 'start_piece':
    case 'prepare_piece':
    case 'fail_piece':
      return `${step.kind}:${step.piece}`;
    default:
      return step.kind;
  }
}

export function nextSteps(state: TaskState): Step[] {
  if (isTerminal(state.status)) return [];
  if (state.startAgent === null) return [{ kind: 'route_entry' }];
  const warning = budgetWarning(state);
  if (warning) return [warning];
  const open = openActivations(state);
  if (open.length === 0) return [unjoinedBranches(state) ?? finalVerification(state) ?? { kind: 'complete' }];
  const steps: Step[] = [];
  let nextStage = state.stages.length + 1;
  for (const activation of open) {
    const node = findNode(state.definition, activation.agent);
    if (!node) {
      return [fail(`no agent '${activation.agent}' in pipeline ${state.pipeline}`, activation.stage, null)];
    }
    let step: Step | null;
    try {
      step =
        node.type === 'session'
          ? planSessionActivation(state, activation, node, open, nextStage)
          : planActivation(state, activation, node, open, nextStage);
    } catch (error) {
      if (error instanceof TemplateError) return [fail(error.message, activation.stage, 'template_error')];
      throw error;
    }
    if (step?.kind === 'fail' && failsOnlyThePiece(step.errorKind)) {
      const piece = pieceOf(state, activation);
      if (piece) step = { kind: 'fail_piece', piece: piece.id, reason: step.reason, stage: step.stage };
    }
    if (step?.kind === 'fail') return [step];
    if (step) {
      if ((step.kind === 'start_stage' || step.kind === 'end_session') && step.stage === nextStage)
        nextStage++;
      steps.push(step);
    }
  }
  return steps;
}

function planActivation(
  state: TaskState,
  activation: Activation,
  node: AgentNode,
  open: Activation[],
  nextStage: number,
): Step | null {
  switch (activation.status) {
    case 'running': {
      const wait = activation.mailbox;
      return wait?.reply
        ? { kind: 'finish_mailbox_stage', activation: activation.id, agent: node.id, stage: wait.stage }
        : null;
    }
    case 'awaiting_human':
    case 'done':
      return null;
    case 'ready':
      return activation.integrates === null
        ? planReady(state, activation, node, open, nextStage)
        : planGraph(state, activation, node);
    case 'settling':
      return planSettling(state, activation, node);
  }
}

function planSessionActivation(
  state: TaskState,
  activation: Activation,
  node: SessionNode,
  open: Activation[],
  nextStage: number,
): Step | null {
  if (activation.status === 'settling') {
    const stage = state.stages[activation.stage! - 1]!;
    const outcome = activation.session?.outcome ?? 'consensus';
    const targets = resolveHandoffs(state.definition, node, stage, activation.branches, outcome);
    if (outcome === 'no_consensus' && targets.length === 0) {
      return fail(
        `session '${node.id}' reached no consensus after ${activation.session?.round ?? node.max_rounds} rounds`,
        stage.n,
        'no_consensus',
      );
    }
    return { kind: 'handoff', stage: stage.n, activation: activation.id, targets };
  }
  if (activation.status !== 'ready') return null;
  if (activation.group !== null && activation.session === null) {
    const join = planJoin(state, activation, open);
    if (join !== 'go') return join;
  }
  if (activation.session === null) {
    const merge = planBranchMerge(state, activation);
    if (merge !== 'go') return merge;
  }
  return planSession(state, activation, node, nextStage);
}

function planReady(
  state: TaskState,
  activation: Activation,
  node: AgentNode,
  open: Activation[],
  nextStage: number,
): Step | null {
  const previous = activation.stage === null ? undefined : state.stages[activation.stage - 1];
  if (previous?.status === 'failed') {
    const error = previous.error;
    if (!error || !retryAfter(node, error.kind, activation.attempts).retry) {
      const tries = activation.attempts === 1 ? '' : ` after ${activation.attempts} attempts`;
      return fail(
        `agent '${node.id}' failed${tries}: ${error?.message ?? 'unknown error'}`,
        previous.n,
        error?.kind ?? null,
      );
    }
  }
  // a plan's pieces never join one another: the planner's integration merges them
  if (
    activation.group !== null &&
    activation.stage === null &&
    activation.resolves === null &&
    !pieceOf(state, activation)
  ) {
    const join = planJoin(state, activation, open);
    if (join !== 'go') return join;
  }
  if (activation.stage === null) {
    const merge = planBranchMerge(state, activation);
    if (merge !== 'go') return merge;
  }
  const unprepared = pieceToPrepare(state, activation);
  if (unprepared) return { kind: 'prepare_piece', piece: unprepared };
  const before =
    node.human_input?.enabled && (node.human_input.mode === 'before' || node.human_input.mode === 'both');
  if (before && activation.humanAnswer === null && !activation.continuation && activation.stage === null) {
    const prompt = node.human_input?.prompt || defaultBeforeQuestion(node, activation.input);
    return {
      kind: 'ask_human',
      activation: activation.id,
      agent: node.id,
      stage: null,
      mode: 'before',
      questions: [prompt],
    };
  }
  const stage = activation.stage ?? nextStage;
  if (activation.stage === null && stage > state.maxStages) {
    return fail(`Exceeded maximum number of stages (${state.maxStages}).`, null, 'max_stages');
  }
  const overBudget = activation.stage === null ? budgetExceeded(state) : null;
  if (overBudget) return fail(overBudget, null, 'budget');
  const input =
    activation.humanAnswer === null
      ? activation.input
      : `${activation.input}\n\n--- User Input ---\n${activation.humanAnswer}`;
  return {
    kind: 'start_stage',
    activation: activation.id,
    agent: node.id,
    stage,
    attempt: activation.attempts + 1,
    input,
    notBefore: activation.retryAt,
  };
}

function defaultBeforeQuestion(node: PipelineNode, input: string): string {
  return `Agent '${node.name}' needs your input before proceeding.\n\nCurrent task: ${input.slice(0, 500)}`;
}

/**
 * A branch of a fan-out that reaches an agent other branches may also reach waits for them;
 * then one activation carries all their outputs (`{{ branches }}`).
 */
function planJoin(state: TaskState, activation: Activation, open: Activation[]): Step | null | 'go' {
  const group = activation.group!;
  const here = activation.agent;
  const reaches = branchReach(state, group);
  const others = open.filter((a) => a !== activation && lineageIn(state, a, group) !== activation.lineage);
  const inGroup = others.filter((a) => lineageIn(state, a, group) !== null);
  const working = inGroup.filter((a) => a.status !== 'ready');
  if (working.some((a) => reaches(a.agent, here))) return null;
  const readyElsewhere = inGroup.filter((a) => a.status === 'ready' && a.agent !== here);
  const blocked = readyElsewhere.some(
    (a) =>
      reaches(a.agent, here) && !reaches(here, a.agent) && !working.some((w) => reaches(w.agent, a.agent)),
  );
  if (blocked) return null;
  const arrived = inGroup.filter((a) => a.status === 'ready' && a.agent === here && a.stage === null);
  if (arrived.length === 0) return 'go';
  const parts = [activation, ...arrived].sort((x, y) => Number(x.id.slice(1)) - Number(y.id.slice(1)));
  // one join per agent: only the earliest arrival proposes it
  if (parts[0] !== activation) return null;
  return { kind: 'join', agent: here, activations: parts.map((a) => a.id) };
}

/**
 * Where a branch of `group` can still go as that branch: through handoffs, but not back through
 * the agent that fanned out. Going back there (a reviewer's `on_reject` to the planner) is a new
 * fan-out after this one has joined, not this branch arriving somewhere — counted as arriving,
 * it made every branch wait for the others to finish, so they ran one after another.
 */
function branchReach(state: TaskState, group: string): (from: string, to: string) => boolean {
  const pipeline = state.definition;
  const source = fanOutAgent(state, group);
  if (source === null) return (from, to) => canReach(pipeline, from, to);
  return (from, to) => reachableInBranch(pipeline, source, from).has(to);
}

const branchReachCache = new WeakMap<Pipeline, Map<string, Set<string>>>();

/** Every agent reachable from `from` (itself included) without going on from `source`. */
function reachableInBranch(pipeline: Pipeline, source: string, from: string): Set<string> {
  const perPipeline = branchReachCache.get(pipeline) ?? new Map<string, Set<string>>();
  branchReachCache.set(pipeline, perPipeline);
  const key = `${source}\0${from}`;
  const cached = perPipeline.get(key);
  if (cached) return cached;
  const seen = new Set([from]);
  const queue = [from];
  for (let id = queue.pop(); id !== undefined; id = queue.pop()) {
    if (id === source && id !== from) continue;
    const node = findNode(pipeline, id);
    for (const next of node ? successors(pipeline, node) : []) {
      if (seen.has(next)) continue;
      seen.add(next);
      queue.push(next);
    }
  }
  perPipeline.set(key, seen);
  return seen;
}

/** The agent whose handoff opened `group`: the origin of the group's first activation. */
function fanOutAgent(state: TaskState, group: string): string | null {
  for (const a of state.activations.values()) {
    if (a.group === group) return a.origin?.agent ?? null;
  }
  return null;
}

/** The agent may ask a person mid-task (`HUMAN_INPUT:`): `human_input` on demand. */
export function asksOnDemand(node: AgentNode): boolean {
  const mode = node.human_input?.enabled ? node.human_input.mode : null;
  return mode === 'on_demand' || mode === 'both';
}

function planSettling(state: TaskState, activation: Activation, node: AgentNode): Step | null {
  const stage = state.stages[activation.stage! - 1]!;
  const piece = pieceOf(state, activation);
  if (repeatsItself(state, node.id, piece?.lineage ?? null)) {
    return fail(
      `agent '${node.id}' produced the same output three times in a row; stopped as a runaway loop`,
      stage.n,
      'runaway',
    );
  }
  if (asksOnDemand(node) && stage.gate === null) {
    const questions = parseHumanInputQuestions(stage.output);
    if (questions.length > 0) {
      return {
        kind: 'ask_human',
        activation: activation.id,
        agent: node.id,
        stage: stage.n,
        mode: 'on_demand',
        questions,
      };
    }
  }
  const ownGate = node.gate;
  const judgesPiece = piece !== null && endsPiece(state, activation, node, stage);
  const gate = ownGate ?? (judgesPiece ? pieceGate(state, activation.id) : null);
  if (gate && stage.gate === null) {
    if (gate.type === 'human')
      return stage.gateWaiting ? null : { kind: 'await_gate', stage: stage.n, agent: node.id };
    const pieceId = judgesPiece && piece ? { piece: piece.id } : {};
    return { kind: 'evaluate_gate', stage: stage.n, agent: node.id, gate: gate.type, ...pieceId };
  }
  const pieceRejected = judgesPiece && rejectedByGate(stage.gate);
  if (stage.gate?.decision === 'rejected' && stage.gate.by !== 'human') {
    // spec and output_schema rejections count too, also for an agent without a gate
    const maxRetries =
      stage.gate.by === 'plan' && node.plan
        ? node.plan.max_rounds
        : (gate?.max_retries ?? DEFAULT_GATE_RETRIES);
    // a piece counts its own rejections, not every piece's
    const rejections = piece
      ? pieceRejected
        ? pieceRejections(state, piece)
        : rejectionsIn(state, node.id, piece.lineage)
      : (state.gateRejections[node.id] ?? 0);
    if (rejections > maxRetries) {
      const what = REJECTED_BY[stage.gate.by] ?? 'Gate kept rejecting output';
      return fail(
        `Agent '${node.id}' exceeded max gate retries (${maxRetries}). ${what}. Last reason: ${stage.gate.reason}`,
        stage.n,
        'gate_rejected',
      );
    }
  }
  if (node.plan && stage.gate?.decision !== 'rejected') return expandPlan(state, activation, node);
  // a piece judged past its first agent goes back to that agent
  const retry = pieceRejected ? pieceRetry(state, activation, stage) : null;
  if (retry) return retry;
  if (activation.resolves !== null) {
    return {
      kind: 'conflict_handled',
      activation: activation.resolves,
      resolver: activation.id,
      stage: stage.n,
    };
  }
  const targets = resolveHandoffs(state.definition, node, stage, activation.branches, null);
  return { kind: 'handoff', stage: stage.n, activation: activation.id, targets };
}

/** `gate.max_retries` of an agent whose output check (spec, output_schema) has no gate to take it from. */
export const DEFAULT_GATE_RETRIES = 3;

const REJECTED_BY: Record<string, string> = {
  spec: 'Its spec kept failing validation (schema/spec.schema.json)',
  output_schema: 'Its output kept failing its output_schema',
  plan: 'Its plan kept failing validation (schema/plan.schema.json)',
};

/**
 * A join whose branches worked in worktrees of their own merges them into its own worktree
 * before it runs; while a conflict waits for its resolver (or a person) it waits too.
 */
function planBranchMerge(state: TaskState, activation: Activation): Step | null | 'go' {
  if (!state.workspace || (activation.joins.length === 0 && !activation.conflict)) return 'go';
  const conflict = activation.conflict;
  if (conflict && !conflict.handled) return null;
  const into = branchLineage(state, activation);
  const resolved = conflict?.branch ?? null;
  const pending = activation.joins
    .filter((lineage) => lineage !== into)
    .map((lineage) => state.branchWorkspaces.get(lineage))
    .filter((ws): ws is BranchWorkspace => ws !== undefined && !ws.merged && !ws.resolved)
    .map((ws) => ws.branch)
    .filter((branch) => branch !== resolved);
  if (pending.length === 0 && resolved === null) return 'go';
  return {
    kind: 'merge_branches',
    activation: activation.id,
    agent: activation.agent,
    into,
    branches: pending,
    resolved,
  };
}

/** Fan-out branches no join collected go into the task branch before the task completes. */
function unjoinedBranches(state: TaskState): Step | null {
  if (!state.workspace) return null;
  // a plan's pieces are merged by its integration, or not at all (a failed piece's branch is kept)
  const pending = [...state.branchWorkspaces.values()].filter(
    (ws) => !ws.merged && !ws.resolved && !isPieceLineage(state, ws.lineage),
  );
  if (pending.length === 0) return null;
  return {
    kind: 'merge_branches',
    activation: null,
    agent: null,
    into: null,
    branches: pending.map((ws) => ws.branch),
    resolved: null,
  };
}

/**
 * A pipeline with a verifier cannot complete on a commit no verifier approved: the last commit
 * goes to the verifier first (and a rejection there fails the task).
 */
function finalVerification(state: TaskState): Step | null {
  const gated = state.definition.agents.find((a) => a.type === 'agent' && a.gate?.verifier);
  const last = [...state.stages].reverse().find((s) => s.commit)?.commit;
  if (!gated || !state.workspace || !last) return null;
  const verdict = state.verified[last];
  if (verdict === 'approved') return null;
  if (verdict === 'rejected') {
    return fail(`the final commit ${last.slice(0, 12)} was rejected by its verifier`, null, 'verification');
  }
  return { kind: 'verify_final', sha: last, agent: gated.id };
}

/** Runaway guard: the agent's last three completed outputs are the same. */
function repeatsItself(state: TaskState, agent: string, lineage: string | null): boolean {
  const outputs: string[] = [];
  for (let i = state.stages.length - 1; i >= 0 && outputs.length < 3; i--) {
    const s = state.stages[i]!;
    if (lineage !== null && state.activations.get(s.activation)?.lineage !== lineage) continue;
    if (s.agent === agent && s.status === 'completed' && !s.turn) outputs.push(s.output);
  }
  return outputs.length === 3 && outputs[0] === outputs[1] && outputs[1] === outputs[2];
}

/** Automated rejections of `agent`'s stages in one lineage (a piece's). */
function rejectionsIn(state: TaskState, agent: string, lineage: string): number {
  return state.stages.filter(
    (s) =>
      s.agent === agent &&
      s.gate?.decision === 'rejected' &&
      s.gate.by !== 'human' &&
      state.activations.get(s.activation)?.lineage === lineage,
  ).length;
}

/**
 * `budget:` stops a task before the stage that would go past it: one more stage is taken to
 * cost what the task's stages have cost on average.
 */
function budgetExceeded(state: TaskState): string | null {
  const budget = state.definition.budget;
  if (!budget) return null;
  const ran = state.stages.filter((s) => s.status === 'completed').length;
  const tokens = state.usage.input_tokens + state.usage.output_tokens;
  const usd = state.usage.cost_usd ?? 0;
  const next = (spent: number) => (ran === 0 ? spent : spent + spent / ran);
  if (budget.tokens !== null && next(tokens) > budget.tokens) {
    return `budget: ${tokens} of ${budget.tokens} tokens used; the next stage would go past it`;
  }
  if (budget.usd !== null && next(usd) > budget.usd) {
    return `budget: $${usd.toFixed(4)} of $${budget.usd} used; the next stage would go past it`;
  }
  return null;
}

/** Once per task: it has used 80 % of its budget (tokens or dollars). */
function budgetWarning(state: TaskState): Step | null {
  const budget = state.definition.budget;
  if (!budget || state.budgetWarned) return null;
  const tokens = state.usage.input_tokens + state.usage.output_tokens;
  if (budget.tokens !== null && tokens >= 0.8 * budget.tokens) {
    return { kind: 'budget_warning', used: tokens, limit: budget.tokens, unit: 'tokens' };
  }
  const usd = state.usage.cost_usd ?? 0;
  if (budget.usd !== null && usd >= 0.8 * budget.usd) {
    return { kind: 'budget_warning', used: usd, limit: budget.usd, unit: 'usd' };
  }
  return null;
}

function fail(reason: string, stage: number | null, errorKind: TaskErrorKind | null): Step {
  return { kind: 'fail', reason, stage, errorKind };
}
