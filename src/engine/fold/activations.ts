import { recordStageInContext, stageOf } from './stage-records.js';
import type { Activation, Branch, Reducers, TaskState } from './types.js';

/**
 * Activations: how they are made (the start, a handoff, a fan-out, a join), found, and placed in
 * fan-out groups and their lineages.
 */

export function activationOf(state: TaskState, id: string): Activation {
  const activation = state.activations.get(id);
  if (!activation) throw new Error(`task ${state.id}: unknown activation ${id}`);
  return activation;
}

export function addActivation(
  state: TaskState,
  init: Pick<Activation, 'agent' | 'input' | 'group' | 'lineage' | 'origin'>,
): Activation {
  const activation: Activation = {
    id: `a${++state.counters.activation}`,
    ...init,
    status: 'ready',
    stage: null,
    attempts: 0,
    retryAt: null,
    humanAnswer: null,
    continuation: false,
    pendingQuestion: null,
    branches: [],
    session: null,
    waitingFor: null,
    joins: [],
    conflict: null,
    resolves: null,
    mailbox: null,
    integrates: null,
  };
  state.activations.set(activation.id, activation);
  return activation;
}

/** The first activation: the task's input, to its first agent. */
export function startWith(state: TaskState, agent: string): void {
  state.startAgent = agent;
  addActivation(state, { agent, input: state.input, group: null, lineage: null, origin: null });
}

export function openActivations(state: Readonly<TaskState>): Activation[] {
  return [...state.activations.values()].filter((a) => a.status !== 'done');
}

/**
 * The lineage of `group` that an activation belongs to, directly or through nested fan-outs;
 * null when it is not inside that group.
 */
export function lineageIn(state: Readonly<TaskState>, activation: Activation, group: string): string | null {
  let currentGroup = activation.group;
  let currentLineage = activation.lineage;
  while (currentGroup !== null) {
    if (currentGroup === group) return currentLineage;
    const parent = state.groups.get(currentGroup);
    if (!parent) return null;
    currentGroup = parent.parentGroup;
    currentLineage = parent.parentLineage;
  }
  return null;
}

/** The lineage of the top-level fan-out an activation works in (its branch worktree), or null. */
export function branchLineage(
  state: Readonly<TaskState>,
  activation: Pick<Activation, 'group' | 'lineage'>,
): string | null {
  let group = activation.group;
  let lineage = activation.lineage;
  while (group !== null) {
    const g = state.groups.get(group);
    if (!g || g.parentGroup === null) return lineage;
    group = g.parentGroup;
    lineage = g.parentLineage;
  }
  return null;
}

export const activationReducers = {
  handoff(state, event) {
    const activation = activationOf(state, event.activation);
    const stage = stageOf(state, event.stage);
    stage.handedOff = true;
    activation.status = 'done';
    recordStageInContext(state, stage, stage.gate?.decision ?? 'completed');
    const origin = { agent: stage.agent, stage: stage.n };
    if (event.targets.length === 1) {
      const [target] = event.targets;
      const next = addActivation(state, {
        agent: target!.agent,
        input: target!.input,
        group: activation.group,
        lineage: activation.lineage,
        origin,
      });
      // a gate sending work back to the same agent continues it: no second `before` question
      next.continuation = target!.condition === 'gate_retry';
    } else if (event.targets.length > 1) {
      const group = `g${++state.counters.group}`;
      state.groups.set(group, {
        id: group,
        parentGroup: activation.group,
        parentLineage: activation.lineage,
      });
      for (const target of event.targets) {
        const lineage = `l${++state.counters.lineage}`;
        addActivation(state, { agent: target.agent, input: target.input, group, lineage, origin });
      }
    }
  },

  join(state, event) {
    const parts = event.activations.map((id) => activationOf(state, id));
    const first = parts[0]!;
    for (const part of parts) part.status = 'done';
    const branches: Branch[] = parts.map((part) => ({
      agent: part.origin?.agent ?? '',
      stage: part.origin?.stage ?? 0,
      output: part.origin ? (state.stages[part.origin.stage - 1]?.output ?? '') : '',
      input: part.input,
    }));
    const input = branches.map((b) => `## from ${b.agent} (stage ${b.stage})\n\n${b.input}`).join('\n\n');
    // the join closes the fan-out when no other branch of it is still going
    const group = first.group ? state.groups.get(first.group) : undefined;
    const othersActive = [...state.activations.values()].some(
      (a) => a.status !== 'done' && group !== undefined && lineageIn(state, a, group.id) !== null,
    );
    const placement =
      group && !othersActive
        ? { group: group.parentGroup, lineage: group.parentLineage }
        : { group: first.group, lineage: first.lineage };
    const next = addActivation(state, { agent: event.agent, input, ...placement, origin: first.origin });
    next.branches = branches;
    next.joins = [...new Set(parts.map((p) => branchLineage(state, p)).filter((l) => l !== null))];
  },
} satisfies Partial<Reducers>;
