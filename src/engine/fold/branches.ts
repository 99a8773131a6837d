import type { ConflictSide } from '../../core/events.js';
import { activationOf, addActivation } from './activations.js';
import { recordStageInContext, stageOf } from './stage-records.js';
import type { Reducers, Stored, TaskState } from './types.js';

/**
 * The worktrees of a top-level fan-out's branches (docs/workspaces.md): made, merged into their
 * join's worktree, and a conflict handed to a resolver (or a person).
 */

export const branchReducers = {
  branch_workspace_ready(state, event) {
    state.branchWorkspaces.set(event.lineage, {
      lineage: event.lineage,
      agent: event.agent,
      path: event.path,
      branch: event.branch,
      start: event.start,
      head: event.start,
      merged: false,
      resolved: false,
    });
  },

  branches_merged: branchesMerged,
  branch_conflict: branchesMerged,

  conflict_handled(state, event) {
    const join = activationOf(state, event.activation);
    if (join.conflict) join.conflict.handled = true;
    const resolver = activationOf(state, event.resolver);
    resolver.status = 'done';
    const stage = stageOf(state, event.stage);
    stage.handedOff = true;
    recordStageInContext(state, stage, stage.gate?.decision ?? 'completed');
  },
} satisfies Partial<Reducers>;

/**
 * Which branches went into a worktree and its new head; for a join, its conflict (and the
 * resolver's activation), or none once everything merged.
 */
function branchesMerged(state: TaskState, event: Stored<'branches_merged'> | Stored<'branch_conflict'>) {
  const byBranch = new Map([...state.branchWorkspaces.values()].map((b) => [b.branch, b]));
  const branches = event.type === 'branches_merged' ? event.branches : event.merged;
  for (const branch of branches) {
    const ws = byBranch.get(branch);
    if (ws) ws.merged = true;
  }
  if (event.resolved) {
    const ws = byBranch.get(event.resolved);
    if (ws) ws.resolved = true;
  }
  if (event.into === null) {
    if (state.workspace) state.workspace.head = event.head;
  } else {
    const into = state.branchWorkspaces.get(event.into);
    if (into) into.head = event.head;
  }
  const join = event.activation ? activationOf(state, event.activation) : null;
  if (!join) return;
  if (event.type === 'branches_merged') {
    join.conflict = null;
    return;
  }
  join.conflict = { branch: event.branch, files: event.files, resolver: event.resolver, handled: false };
  if (event.resolver) {
    const resolver = addActivation(state, {
      agent: event.resolver,
      input: conflictInput(state, event),
      group: join.group,
      lineage: join.lineage,
      origin: join.origin,
    });
    resolver.resolves = join.id;
  }
}

/** What an `on_conflict` agent is told: the branch, the files, and where to work. */
export function conflictInput(
  state: Readonly<TaskState>,
  conflict: { branch: string; files: string[]; into: string | null; sides?: ConflictSide[] },
): string {
  const into =
    conflict.into === null ? state.workspace?.branch : state.branchWorkspaces.get(conflict.into)?.branch;
  return [
    `Merging branch ${conflict.branch} into ${into ?? 'the task branch'} conflicts in:`,
    ...conflict.files.map((f) => `- ${f}`),
    '',
    'The merge was aborted: nothing was overwritten, and the branch keeps its commits.',
    `You work in the worktree of ${into ?? 'the task branch'}. Integrate the branch's change: for example`,
    `\`git merge ${conflict.branch}\`, resolve the conflicts and commit, or re-apply its change by hand.`,
    'troupe commits what you leave when your stage ends, then merges the remaining branches.',
    '',
    ...(conflict.sides ?? []).flatMap((side) => [
      `--- ${side.file} in ${into ?? 'the task branch'} ---`,
      side.ours ?? '(not there)',
      `--- ${side.file} in ${conflict.branch} ---`,
      side.theirs ?? '(not there)',
      '',
    ]),
    'Task:',
    state.input,
  ].join('\n');
}
