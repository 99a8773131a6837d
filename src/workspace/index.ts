export { commitStage, type StageCommitInfo, stageCommitMessage } from './commit.js';
export { DirtyCheckoutError, GitError, MergeConflictError, NoCommitError } from './errors.js';
export { assertAgentId, assertTaskId } from './ids.js';
export {
  type MergeBranchesResult,
  type MergeIntoBaseOptions,
  type MergeIntoBaseResult,
  mergeBranches,
  mergeIntoBase,
} from './merge.js';
export { type PruneAction, type PruneOptions, pruneWorktrees } from './prune.js';
export { type PullRequestOptions, type PullRequestResult, pullRequest } from './pull-request.js';
export { currentBranch, ensureExcluded, findRepo, isDirty, uncommittedFiles } from './repo.js';
export {
  applyScriptedEffects,
  ScriptedEffectError,
  type ScriptedEffects,
  type ScriptedEffectsResult,
} from './scripted-effects.js';
export {
  DEFAULT_BRANCH_PREFIX,
  type EnsureBranchWorktreeOptions,
  type EnsureTaskWorktreeOptions,
  ensureBranchWorktree,
  ensureTaskWorktree,
  removeWorktree,
  type TaskWorktree,
  taskBranch,
} from './task-worktree.js';
export { type VerifyCheckout, verifyCheckout, withVerifyCheckout } from './verify-checkout.js';
export { listWorktrees, type WorktreeInfo } from './worktree-status.js';
