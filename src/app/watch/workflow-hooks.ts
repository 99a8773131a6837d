import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { messageOf } from '../../core/errors.js';
import type { SymphonySettings } from '../../pipeline/symphony/workflow.js';
import { findRepo, worktreesDir } from '../../workspace/repo.js';
import { ensureTaskWorktree, removeWorktree } from '../../workspace/task-worktree.js';
import { runHookProcess } from './hook-process.js';

/**
 * WORKFLOW.md's `hooks` for `troupe watch` (docs/trackers.md, "Hooks"), with Symphony's
 * semantics mapped onto troupe's workspace of an issue: its task's worktree
 * (`.troupe/worktrees/<task>`, which every retry of the issue reuses).
 *
 * - after_create: when the worktree is made (not when a retry finds it); a failure fails the
 *   attempt and the worktree is removed again, so the next attempt makes it and runs it again.
 * - before_run: before each attempt, in the worktree; a failure fails the attempt.
 * - after_run: after each attempt however it ended (a failed before_run too), once the worktree
 *   exists; a failure is logged and ignored.
 * - before_remove: before the watcher removes the worktree (its issue reached a terminal
 *   state); a failure is logged and ignored, the worktree is removed (its branch stays).
 *
 * Hooks are the repository's own scripts, trusted as a Makefile is; issue data reaches them only
 * as environment variables (TROUPE_ISSUE_ID, TROUPE_ISSUE_IDENTIFIER, TROUPE_TASK_ID), never in
 * the command.
 */

export type HookName = 'after_create' | 'before_run' | 'after_run' | 'before_remove';

export interface HookIssue {
  issueId: string;
  identifier: string;
  taskId: string;
  /** Where the task's worktree starts (an issue's next turn: the previous turn's branch); default: the main checkout's branch. */
  base?: string | null;
}

export interface WorkflowHooksWorld {
  /** The project (its repository): where task worktrees are made. */
  root: string;
  env: NodeJS.ProcessEnv;
  /** One line in the watcher's log. */
  log: (line: string) => void;
}

export class WorkflowHooks {
  constructor(
    private readonly hooks: SymphonySettings['hooks'],
    private readonly world: WorkflowHooksWorld,
  ) {}

  /** Whether an attempt needs the worktree before the task runs (a hook runs in it). */
  get active(): boolean {
    const h = this.hooks;
    return h.after_create !== null || h.before_run !== null || h.after_run !== null;
  }

  /**
   * The issue's workspace before an attempt: the worktree made, and after_create run when it is
   * new. Its path, or why the attempt fails (one line, already logged).
   */
  async prepare(issue: HookIssue, signal?: AbortSignal): Promise<{ path: string } | { why: string }> {
    let path: string;
    let created: boolean;
    try {
      ({ path, created } = await ensureTaskWorktree({
        repo: await this.repo(),
        taskId: issue.taskId,
        ...(issue.base ? { base: issue.base } : {}),
      }));
    } catch (error) {
      const why = `workspace not made: ${messageOf(error)}`;
      this.world.log(`${issue.identifier}: ${why}`);
      return { why };
    }
    if (created) {
      const why = await this.run('after_create', issue, path, signal);
      if (why !== null) {
        await this.removeQuietly(issue);
        return { why };
      }
    }
    return { path };
  }

  /** before_run in the prepared workspace: null when the attempt may run, else why it fails. */
  beforeRun(issue: HookIssue, path: string, signal?: AbortSignal): Promise<string | null> {
    return this.run('before_run', issue, path, signal);
  }

  /** After an attempt, however it ended: after_run; a failure is logged and ignored. */
  async afterAttempt(issue: HookIssue, signal?: AbortSignal): Promise<void> {
    if (this.hooks.after_run === null) return;
    const path = await this.existingWorktree(issue);
    if (path) await this.run('after_run', issue, path, signal);
  }

  /** The issue reached a terminal state: before_remove, then its worktree goes (its branch stays). */
  async removeWorkspace(issue: HookIssue): Promise<void> {
    const path = await this.existingWorktree(issue);
    if (!path) return;
    await this.run('before_remove', issue, path);
    await this.removeQuietly(issue);
  }

  /** Runs one hook when WORKFLOW.md has it: null when it passed (or there is none), else why not. */
  private async run(
    name: HookName,
    issue: HookIssue,
    cwd: string,
    signal?: AbortSignal,
  ): Promise<string | null> {
    const script = this.hooks[name];
    if (script === null) return null;
    const outcome = await runHookProcess({
      script,
      cwd,
      timeoutMs: this.hooks.timeout_ms,
      env: {
        ...this.world.env,
        TROUPE_HOOK: name,
        TROUPE_ISSUE_ID: issue.issueId,
        TROUPE_ISSUE_IDENTIFIER: issue.identifier,
        TROUPE_TASK_ID: issue.taskId,
        TROUPE_WORKSPACE: cwd,
      },
      ...(signal ? { signal } : {}),
    });
    const prefix = `${issue.identifier}: hook ${name}`;
    for (const line of outcome.output) this.world.log(`${prefix} | ${line}`);
    if (outcome.ok) return null;
    const ignored = name === 'after_run' || name === 'before_remove';
    const why = `hook ${name} failed (${outcome.why})`;
    this.world.log(`${issue.identifier}: ${why}${ignored ? '; ignored' : ''}`);
    return ignored ? null : why;
  }

  /** The repository the project is in, as the engine finds it for the task's worktree. */
  private async repo(): Promise<string> {
    return (await findRepo(this.world.root)) ?? this.world.root;
  }

  private async existingWorktree(issue: HookIssue): Promise<string | null> {
    const path = join(worktreesDir(await this.repo()), issue.taskId);
    return existsSync(path) ? path : null;
  }

  private async removeQuietly(issue: HookIssue): Promise<void> {
    try {
      await removeWorktree({ repo: await this.repo(), taskId: issue.taskId, force: true });
    } catch (error) {
      this.world.log(`${issue.identifier}: workspace not removed: ${messageOf(error)}`);
    }
  }
}
