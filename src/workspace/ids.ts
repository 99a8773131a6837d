import { UsageError } from '../core/errors.js';

/**
 * Task and agent ids become directory and branch names, so only a safe alphabet passes:
 * letters, digits, `_` and `-`, not starting with `-` (never read as an option). A task id may
 * not contain `--`, which separates task and agent in fan-out names (`T-1--reviewer`).
 */
const TASK_ID = /^[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*$/;
const AGENT_ID = /^[A-Za-z0-9_][A-Za-z0-9_-]*$/;
const MAX = 100;

export function assertTaskId(id: string): void {
  if (id.length > MAX || !TASK_ID.test(id)) {
    throw new UsageError(
      `unsafe task id ${JSON.stringify(id)} for a worktree: use letters, digits, '_' and single '-' (no '/', '..' or '--')`,
    );
  }
}

export function assertAgentId(id: string): void {
  if (id.length > MAX || !AGENT_ID.test(id)) {
    throw new UsageError(
      `unsafe agent id ${JSON.stringify(id)} for a worktree: use letters, digits, '_' and '-' (no '/' or '..')`,
    );
  }
}

/** The branch prefix must make valid, relative ref names: `troupe/`, `ai/`, `agents-`. */
export function assertBranchPrefix(prefix: string): void {
  if (
    !/^(?:[A-Za-z0-9_][A-Za-z0-9_-]*\/)*(?:[A-Za-z0-9_][A-Za-z0-9_-]*)?$/.test(prefix) ||
    prefix.length > MAX
  ) {
    throw new UsageError(`invalid branch prefix ${JSON.stringify(prefix)}: use e.g. 'troupe/'`);
  }
}
