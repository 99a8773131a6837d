import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Pipeline } from '../../core/pipeline.js';
import type { TaskIssueRef } from '../../core/tracker.js';
import { type TaskState, workspaceSettings } from '../../engine/fold/task-state.js';
import { editingAgents } from '../../pipeline/isolation.js';
import type { PullRequestSetting } from '../../pipeline/tracker-config.js';
import { pullRequest } from '../../workspace/index.js';
import { markdownInline } from '../markdown-text.js';
import { issueTitleIn } from './issue-input.js';
import { issueBase } from './issue-turns.js';
import type { WatchContext } from './watch-poll.js';

/**
 * The end of a watched issue's completed task: a pull request from its branch (when the watch
 * opens them and the task has work on a branch of its own), linked to the issue, then the issue
 * moved to the hand-off state. Done again by each poll until it all succeeds; the pull request is
 * recorded on the issue's claim once linked, so no watcher opens or links it again (one whose link
 * failed finds it again through gh, which answers with the one already open for the branch).
 */
export async function handOffIssue(
  ctx: WatchContext,
  issueId: string,
  taskId: string,
  note: (state: TaskState) => Promise<void>,
): Promise<void> {
  const { tracker, handoffState } = ctx.opened;
  const state = ctx.tasks.state(taskId);
  const identifier = state.issue?.identifier ?? issueId;
  const setting = ctx.setup.config.pull_request;
  if (setting && !pullRequestOf(ctx, issueId) && proposesBranch(state)) {
    // a later turn's branch starts from the previous turn's: the issue's work is from the first's base
    const base = setting.base ?? issueBase(ctx, taskId);
    try {
      const opened = await pullRequest({
        repo: state.workspace!.repo,
        taskId,
        title: pullRequestTitle(state, identifier),
        body: pullRequestBody(state, identifier),
        remote: setting.remote,
        ...(base ? { base } : {}),
        ...(setting.draft ? { draft: true } : {}),
        branchPrefix: workspaceSettings(state)?.branch_prefix,
      });
      await tracker.linkPullRequest(issueId, opened.url);
      ctx.store.updateIssueClaim(tracker.source, issueId, { pullRequest: opened.url });
    } catch (error) {
      ctx.failed(`${identifier}: pull request not opened or linked (retried at the next poll)`, error);
      return;
    }
    await note(state);
  }
  if (!handoffState) return;
  try {
    await tracker.moveTo(issueId, handoffState);
  } catch (error) {
    ctx.failed(`${identifier} not moved to ${handoffState}`, error);
  }
}

/** Whether a completed task's hand-off is still to be done: an issue to move, or a pull request to open. */
export function handOffPending(ctx: WatchContext, issueId: string, state: TaskState): boolean {
  return (
    ctx.opened.handoffState !== null ||
    (ctx.setup.config.pull_request !== null && !pullRequestOf(ctx, issueId) && proposesBranch(state))
  );
}

/** The pull request recorded on the issue's claim, once opened and linked. */
export function pullRequestOf(ctx: WatchContext, issueId: string): string | null {
  const source = ctx.opened.tracker.source;
  return ctx.store.issueClaims(source).find((c) => c.issueId === issueId)?.pullRequest ?? null;
}

/** Work committed on the task's own branch and not merged into base: what a pull request proposes. */
function proposesBranch(state: TaskState): boolean {
  const w = state.workspace;
  return Boolean(w && !w.merged && !w.removed && w.head);
}

/**
 * The pipeline a watched issue's task runs: with pull requests on, a task branch that would be
 * merged into base at completion is kept for its pull request instead (`merge: manual`; a
 * person's `troupe merge` still merges it). A pipeline without `workspace:` whose agents edit
 * code gets the worktree it would have had by default in `cwd`'s git repository (outside one, it
 * runs in place as it would have, with no branch to propose).
 */
export function pipelineForWatch(
  pipeline: Pipeline,
  setting: PullRequestSetting | null,
  cwd: string,
): Pipeline {
  if (!setting) return pipeline;
  const written = pipeline.workspace;
  if (written) {
    return written.isolation === 'worktree' && written.merge === 'on_complete'
      ? { ...pipeline, workspace: { ...written, merge: 'manual' } }
      : pipeline;
  }
  if (editingAgents(pipeline).length === 0 || !insideGitRepo(cwd)) return pipeline;
  return {
    ...pipeline,
    workspace: { isolation: 'worktree', base: null, merge: 'manual', branch_prefix: 'troupe/', remote: null },
  };
}

function insideGitRepo(dir: string): boolean {
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (existsSync(join(d, '.git'))) return true;
    if (dirname(d) === d) return false;
  }
}

function pullRequestTitle(state: TaskState, identifier: string): string {
  const title = issueTitleIn(state.input) ?? state.input.split('\n')[0]!.trim();
  const line = `${identifier}: ${title}`.replace(/\s+/g, ' ');
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/** The issue it closes or links, and what the task did; others' text escaped (Markdown). */
function pullRequestBody(state: TaskState, identifier: string): string {
  const stages = state.stages.filter(Boolean);
  const last = stages.at(-1)?.output.trim().split('\n')[0] ?? '';
  return [
    issueLine(state.issue, identifier),
    '',
    `Opened by troupe for task \`${state.id}\` (pipeline ${markdownInline(state.pipeline, 80)}): ${stages.length} stage${stages.length === 1 ? '' : 's'}, ${stages.map((s) => markdownInline(s.agent, 40)).join(' → ')}.`,
    ...(last ? ['', `Last output: ${markdownInline(last, 300)}`] : []),
  ].join('\n');
}

function issueLine(issue: TaskIssueRef | null, identifier: string): string {
  if (issue?.source.startsWith('github:') && /^#\d+$/.test(issue.identifier))
    return `Closes ${issue.identifier}`;
  const url = issue?.url && /^https?:\/\/\S+$/.test(issue.url) ? ` ${issue.url}` : '';
  return `Issue: ${markdownInline(identifier, 80)}${url}`;
}
