import type { Pipeline } from '../core/pipeline.js';
import type { Script } from '../core/script.js';
import type { TaskState } from '../engine/fold/task-state.js';
import { DEFAULT_WORKTREE, defaultIsolation } from '../pipeline/isolation.js';
import { pruneWorktrees } from '../workspace/prune.js';
import { findRepo } from '../workspace/repo.js';
import type { Project } from './project.js';

/**
 * `troupe test`: a pipeline run offline against its script that leaves the repository as it was.
 * Its worktree (when it has one) is never merged nor pushed; once the test passes, its worktrees
 * and branches are deleted with no archive tag. A failed test keeps them to be looked at
 * (`troupe worktrees prune --force` removes them).
 */
export interface PipelineTest {
  id: string;
  state: TaskState;
  passed: boolean;
  /** The worktree a failed test left to be looked at, if any. */
  kept: string | null;
}

export async function runPipelineTest(
  project: Pick<Project, 'tasks'>,
  run: { pipeline: Pipeline; script: Script; input: string; agent?: string; cwd: string },
): Promise<PipelineTest> {
  const repo = await findRepo(run.cwd);
  const id = project.tasks.start({
    pipeline: testedPipeline(run.pipeline, repo !== null),
    input: run.input,
    ...(run.agent ? { agent: run.agent } : {}),
    script: run.script,
    cwd: run.cwd,
  });
  const state = await project.tasks.continue(id);
  const passed = state.status === 'completed';
  if (!repo || !state.workspace) return { id, state, passed, kept: null };
  if (!passed) return { id, state, passed, kept: state.workspace.path };
  await pruneWorktrees(repo, { endedTasks: new Set([id]), only: id, force: true, archive: false });
  return { id, state, passed, kept: null };
}

/** The pipeline as a test runs it: where it would work in a worktree, one never merged nor pushed. */
export function testedPipeline(pipeline: Pipeline, inGitRepo: boolean): Pipeline {
  const written = pipeline.workspace;
  if (written) return { ...pipeline, workspace: { ...written, merge: 'never', remote: null } };
  if (defaultIsolation(pipeline, inGitRepo).isolation === 'none') return pipeline;
  return { ...pipeline, workspace: { ...DEFAULT_WORKTREE, merge: 'never' } };
}
