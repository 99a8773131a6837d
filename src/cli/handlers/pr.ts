import { openProject } from '../../app/project.js';
import { UsageError } from '../../core/errors.js';
import { findRepo, pullRequest } from '../../workspace/index.js';
import { type CommandIo, writeJson } from '../command-io.js';

export interface PrOptions {
  base?: string;
  remote: string;
  title?: string;
  draft?: boolean;
  json?: boolean;
}

/** `troupe pr <task>`: push the task branch and open a pull request with `gh`. */
export async function openPullRequest(taskId: string, options: PrOptions, io: CommandIo): Promise<number> {
  const repo = await findRepo(io.cwd);
  if (!repo) throw new UsageError('not inside a git repository');
  const task = openProject(io.cwd).store.task(taskId);
  const input = task?.input.split('\n')[0]?.trim() ?? '';
  const title = options.title ?? (input ? input.slice(0, 72) : `troupe task ${taskId}`);
  const body = [
    `Opened by troupe for task ${taskId}${task ? ` (pipeline ${task.pipeline}, ${task.status})` : ''}.`,
    ...(task ? ['', ...task.input.split('\n').map((l) => `> ${l}`)] : []),
  ].join('\n');
  const result = await pullRequest({
    repo,
    taskId,
    title,
    body,
    remote: options.remote,
    ...(options.base ? { base: options.base } : {}),
    ...(options.draft ? { draft: true } : {}),
  });
  if (options.json) writeJson(io, result);
  else io.out(`${result.existing ? 'already open' : 'opened'}: ${result.url}\n`);
  return 0;
}
