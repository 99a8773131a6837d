import type { AgentNode, Pipeline, WorkspaceSettings } from '../core/pipeline.js';

/**
 * Where a task works when its pipeline has no `workspace:` mapping: in its own git worktree when
 * it starts inside a git repository and an agent of the pipeline edits code, in place otherwise.
 *
 * "Edits code" is what the pipeline declares, so `validate` can say it before anything runs: an
 * agent whose `permissions:` is `edit` or `full`. An agent without `permissions:` does not count
 * (it would be read_only in place, so there is nothing to isolate), nor do a script's `write:`
 * entries (a property of the script, not of the pipeline). A `runtime: command` agent's argv can
 * do anything and troupe cannot tell what; one that changes files says `permissions: edit`.
 */

/** The settings of a worktree chosen by default: those a `workspace:` mapping has when empty. */
export const DEFAULT_WORKTREE: WorkspaceSettings = {
  isolation: 'worktree',
  base: null,
  merge: 'on_complete',
  branch_prefix: 'troupe/',
  remote: null,
};

export interface IsolationChoice {
  isolation: 'worktree' | 'none';
  /** Why, for `troupe status`: "agent dev edits code", "not in a git repository"… */
  reason: string;
}

export function editingAgents(pipeline: Pipeline): AgentNode[] {
  return pipeline.agents.filter(
    (a): a is AgentNode => a.type === 'agent' && (a.permissions === 'edit' || a.permissions === 'full'),
  );
}

/** The default, for a pipeline without `workspace:`; `inGitRepo`: the task's directory is in one. */
export function defaultIsolation(pipeline: Pipeline, inGitRepo: boolean): IsolationChoice {
  const editors = editingAgents(pipeline).map((a) => a.id);
  if (editors.length === 0) return { isolation: 'none', reason: 'no agent edits code' };
  if (!inGitRepo) return { isolation: 'none', reason: 'not in a git repository' };
  return { isolation: 'worktree', reason: `${editorsPhrase(editors)} code` };
}

/**
 * What a task of this pipeline will do, said without knowing where it runs (for `validate`), or
 * null when nothing is written and no agent edits code (in place, as ever).
 */
export function isolationSummary(pipeline: Pipeline): string | null {
  const written = pipeline.workspace;
  if (written) return written.isolation === 'worktree' ? 'worktree isolation' : null;
  const editors = editingAgents(pipeline).map((a) => a.id);
  return editors.length > 0 ? `worktree in a git repo (${editorsPhrase(editors)} code)` : null;
}

function editorsPhrase(ids: string[]): string {
  const shown = ids.length > 3 ? [...ids.slice(0, 3), `${ids.length - 3} more`] : ids;
  return ids.length === 1 ? `agent ${ids[0]} edits` : `agents ${shown.join(', ')} edit`;
}
