import type { WorkspaceSettings } from './pipeline.js';

export interface Conflict {
  /** The branch whose merge conflicted. */
  branch: string;
  /** Files with conflicts, relative to the repository root. */
  files: string[];
  /** Branches merged before the conflict (they stay merged; merging again skips them). */
  merged: string[];
}

/**
 * A stage's commit: `sha` is what the log records; `parent` the branch tip it was made on, which
 * `advance` moves from (null: the branch is at `sha` already, the agent committed its work itself).
 */
export interface StageCommit {
  sha: string;
  parent: string | null;
}

/** A commit on the task branch that the log never recorded, set aside before the merge. */
export interface StrayCommit {
  sha: string;
  /** The tag that keeps it, for forensics: `troupe/stray/<task>/<n>`. */
  tag: string;
}

/**
 * What a task does with git when it works in a worktree (`workspace: {isolation: worktree}`, or
 * the default for a pipeline whose agents edit code, pipeline/isolation.ts): its own
 * worktree and branch, a commit after every stage, and a merge back into base at the end.
 * The executor calls this through its port; every call is safe to repeat.
 */
export interface TaskWorkspace {
  /** The repository `cwd` is in, or null outside git (the default isolation asks). */
  repoOf(cwd: string): Promise<string | null>;
  prepare(
    taskId: string,
    cwd: string,
    settings: WorkspaceSettings,
  ): Promise<{ path: string; branch: string; base: string; repo: string }>;
  /**
   * The stage's commit of what changed in `path`, made WITHOUT moving its branch: it counts only
   * once the stage's events are stored under the task's lease, and then `advance` puts it on the
   * branch. `recorded`: the branch's last commit in the log. Null when the stage left nothing (no
   * change, and no commit of the agent's own beyond `recorded`).
   */
  commit(
    path: string,
    info: { task: string; stage: number; agent: string },
    recorded: string | null,
  ): Promise<StageCommit | null>;
  /**
   * Moves the worktree's branch to the stage's commit, from the tip it was made on
   * (compare-and-swap); with `workspace: {remote}`, pushes it.
   */
  advance(path: string, commit: StageCommit): Promise<void>;
  /**
   * Puts the worktree at the commit the task's log says it is at (its last stage's commit, or
   * where the branch started): after a crash or a restart, what the log does not know is set
   * aside — a commit is kept as a tag `troupe/archive/<task>-<sha>`, never lost.
   */
  align(path: string, taskId: string, expected: string | null, base: string): Promise<void>;
  /**
   * Files as they are at `rev` (a commit or branch), each cut to `maxBytes`; null for a file that
   * is not there. What a conflict's resolver is shown of both sides.
   */
  showFiles(
    path: string,
    rev: string,
    files: string[],
    maxBytes: number,
  ): Promise<Record<string, string | null>>;
  /** The files changed between two commits (a plan's piece: from its start to its head). */
  changedFiles(path: string, from: string, to: string): Promise<string[]>;
  /**
   * Runs `fn` in a fresh detached checkout of `sha`. The checkout may be kept for the task's next
   * verification (moved to its commit, cleaned) until `releaseCheckouts`.
   */
  verifyAt<T>(repo: string, taskId: string, sha: string, fn: (cwd: string) => Promise<T>): Promise<T>;
  /**
   * Keeps `count` detached checkouts of `branch` made ahead, in the background, for the task's
   * fan-out worktrees and verifiers to take (0: make no more); `releaseCheckouts` removes them.
   */
  keepCheckoutsReady(repo: string, taskId: string, branch: string, count: number): void;
  /** Removes what `verifyAt` and `keepCheckoutsReady` kept for the task (at the end of a run). */
  releaseCheckouts(repo: string, taskId: string): Promise<void>;
  /**
   * Merges the task branch into `base`, and only what the log recorded: `recorded` is the branch's
   * last commit in the log (null: none, the branch's start). A tip that is not it (a superseded
   * attempt's commit) is kept as tag `troupe/stray/<task>/<n>` and the branch put back at
   * `recorded` before the merge (`stray` says so); never merged.
   */
  merge(
    repo: string,
    taskId: string,
    settings: WorkspaceSettings,
    base: string,
    recorded: string | null,
  ): Promise<({ merged: string; sha: string } | { conflict: string[] }) & { stray?: StrayCommit }>;
  /**
   * A fan-out branch's worktree (`troupe/<task>--<agent>`). With `expected` (the log knows this
   * branch: a resumed run) it is reused and put back at that commit; without, the branch starts
   * afresh at `start` (the task branch's last commit in the log; null: its tip in git) — an
   * earlier fan-out's tip that is not in the task branch is kept as tag
   * `troupe/archive/<task>--<agent>-<sha12>` first.
   */
  prepareBranch(
    repo: string,
    taskId: string,
    agent: string,
    settings: WorkspaceSettings,
    expected: string | null,
    start?: string | null,
  ): Promise<{ path: string; branch: string; start: string }>;
  /**
   * The join, made WITHOUT moving the branch: a commit of what was left uncommitted in `path` (a
   * conflict resolved by hand) with `leftoverMessage` (null: nothing was resolved by hand, no such
   * commit is looked for), then the merges of `branches` in order
   * (merged ones are skipped; a conflict is reported, the merges before it kept). `head`: the
   * last commit made (`from` when none); `from`: the branch tip they were made on. They count only
   * once the join is recorded under the task's lease; then `advance` moves the branch from `from`
   * to `head`, and the worktree with it.
   */
  mergeBranches(
    path: string,
    branches: string[],
    leftoverMessage: string | null,
  ): Promise<({ merged: true } | { conflict: Conflict }) & { head: string; from: string }>;
  /**
   * After the task branch went into base: removes the task's worktrees and branches (fan-outs'
   * too) whose commits are all in base, and returns what went (branch names, or paths of
   * checkouts without one). Anything holding work base lacks, or uncommitted changes, stays.
   */
  tidy(repo: string, taskId: string): Promise<string[]>;
}
