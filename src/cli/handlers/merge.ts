import { openProject } from '../../app/project.js';
import { UsageError } from '../../core/errors.js';
import { findRepo, MergeConflictError, mergeIntoBase } from '../../workspace/index.js';
import { restoreRecordedTip } from '../../workspace/recorded-tip.js';
import { type CommandIo, writeJson } from '../command-io.js';

export interface MergeOptions {
  base?: string;
  json?: boolean;
}

/** `troupe merge <task>`: the task branch into its base (fast-forward when possible). */
export async function mergeTask(taskId: string, options: MergeOptions, io: CommandIo): Promise<number> {
  const repo = await findRepo(io.cwd);
  if (!repo) throw new UsageError('not inside a git repository');
  const project = openProject(io.cwd);
  const status = project.store.task(taskId)?.status;
  if (status && status !== 'completed') io.err(`troupe: note: task ${taskId} is ${status}, not completed\n`);
  // as the task's own merge does: only what its log recorded reaches the base
  const workspace = status ? project.tasks.state(taskId).workspace : null;
  if (workspace) {
    const stray = await restoreRecordedTip({
      repo: workspace.repo,
      taskId,
      branch: workspace.branch,
      base: options.base ?? workspace.base,
      recorded: workspace.head ?? null,
    });
    if (stray)
      io.err(
        `troupe: note: ${workspace.branch} held a commit its log does not know (${stray.sha.slice(0, 12)}); kept as tag ${stray.tag}, not merged\n`,
      );
  }
  const result = await mergeIntoBase({ repo, taskId, ...(options.base ? { base: options.base } : {}) });
  if ('conflict' in result) {
    const { branch, base, files } = result.conflict;
    throw new MergeConflictError(
      branch,
      base,
      files,
      `nothing was changed; resolve it in the task worktree (cd .troupe/worktrees/${taskId} && git merge ${base}), then run \`troupe merge ${taskId}\` again`,
    );
  }
  if (options.json) {
    writeJson(io, result);
    return 0;
  }
  const how =
    result.merged === 'up-to-date'
      ? 'already merged'
      : result.merged === 'fast-forward'
        ? 'fast-forward'
        : 'merge commit';
  io.out(`${result.branch} → ${result.base}: ${how} (${result.sha.slice(0, 12)})\n`);
  return 0;
}
