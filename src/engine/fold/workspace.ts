import type { WorkspaceSettings } from '../../core/pipeline.js';
import { DEFAULT_WORKTREE } from '../../pipeline/isolation.js';
import { stageOf } from './stage-records.js';
import type { Reducers, TaskState } from './types.js';

/** Where the task works: in place or in its own worktree, what it commits there, and its merge. */

export const workspaceReducers = {
  isolation_chosen(state, event) {
    state.isolation = { isolation: event.isolation, reason: event.reason };
  },

  workspace_ready(state, event) {
    // again for the same branch: the task moved to another machine's worktree, its commits with it
    const same = state.workspace?.branch === event.branch ? state.workspace : null;
    state.workspace = {
      ...same,
      path: event.path,
      branch: event.branch,
      base: event.base,
      repo: event.repo,
      merged: same?.merged ?? null,
    };
    state.cwd = event.path;
  },

  workspace_committed(state, event) {
    stageOf(state, event.stage).commit = event.sha;
    if (event.branch) {
      const ws = [...state.branchWorkspaces.values()].find((b) => b.branch === event.branch);
      if (ws) ws.head = event.sha;
    } else if (state.workspace) state.workspace.head = event.sha;
  },

  workspace_removed(state, event) {
    const w = state.workspace;
    if (w && event.removed.includes(w.branch)) {
      w.removed = true;
      // the worktree is gone: a follow-up (`troupe fix`) starts where the task's repository is
      state.cwd = w.repo;
    }
  },

  workspace_merged(state, event) {
    if (state.workspace) state.workspace.merged = event.sha;
  },

  workspace_conflict(state, event) {
    if (state.workspace) state.workspace.notMerged = `conflict in ${event.files.join(', ')}`;
  },

  workspace_merge_failed(state, event) {
    if (state.workspace) state.workspace.notMerged = event.reason;
  },
} satisfies Partial<Reducers>;

/** The task's workspace settings: its pipeline's, else the default worktree it chose at start. */
export function workspaceSettings(state: Readonly<TaskState>): WorkspaceSettings | null {
  if (state.definition.workspace) return state.definition.workspace;
  return state.isolation?.isolation === 'worktree' ? DEFAULT_WORKTREE : null;
}
