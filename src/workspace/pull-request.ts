import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { execa } from 'execa';
import { NotFoundError, UsageError } from '../core/errors.js';
import { GitError } from './errors.js';
import { git, gitOk, resolveCommit } from './git.js';
import { assertTaskId } from './ids.js';
import { branchBase, DEFAULT_BRANCH_PREFIX, taskBranch } from './task-worktree.js';

export interface PullRequestOptions {
  repo: string;
  taskId: string;
  title: string;
  body: string;
  /** Default: the base the task branch started from. */
  base?: string;
  remote?: string;
  draft?: boolean;
  branchPrefix?: string;
}

export interface PullRequestResult {
  url: string;
  branch: string;
  base: string;
  /** gh said a pull request for this branch was already open. */
  existing: boolean;
}

/**
 * Pushes the task branch and opens a pull request with `gh`. Without `gh` on PATH it changes
 * nothing and says which two commands would do it.
 */
export async function pullRequest(options: PullRequestOptions): Promise<PullRequestResult> {
  assertTaskId(options.taskId);
  const repo = realpathSync(options.repo);
  const branch = taskBranch(options.taskId, options.branchPrefix ?? DEFAULT_BRANCH_PREFIX);
  if (!(await resolveCommit(repo, `refs/heads/${branch}`))) {
    throw new NotFoundError(`task ${options.taskId} has no branch ${branch}`);
  }
  const base = options.base ?? (await branchBase(repo, branch));
  if (!base)
    throw new UsageError(`no base recorded for ${branch}`, { hint: 'name one with --base <branch>' });
  const remote = options.remote ?? 'origin';
  const create = ['--head', branch, '--base', base, '--title', options.title];
  const gh = requireGh(
    `push and open it yourself:\n    git push --set-upstream ${remote} ${branch}\n    ${['gh', 'pr', 'create', ...create].map(shellQuote).join(' ')} --fill`,
  );
  if ((await git(repo, ['remote', 'get-url', remote])).code !== 0) {
    throw new NotFoundError(`no git remote named ${remote}`, {
      hint: 'add one (git remote add origin <url>) or pass --remote',
    });
  }
  await gitOk(repo, [
    'push',
    '--quiet',
    '--set-upstream',
    remote,
    `refs/heads/${branch}:refs/heads/${branch}`,
  ]);
  const opened = await ghPullRequest(gh, repo, [
    ...create,
    '--body',
    options.body,
    ...(options.draft ? ['--draft'] : []),
  ]);
  return { ...opened, branch, base };
}

/** gh's path; without it on PATH, a NotFoundError whose hint says what to do by hand. */
export function requireGh(hint: string): string {
  const gh = onPath('gh');
  if (!gh)
    throw new NotFoundError('gh (the GitHub CLI) is not on PATH, so troupe cannot open the pull request', {
      hint,
    });
  return gh;
}

/** `gh pr create <args>` in `cwd`: the URL gh printed, also when one was already open. */
export async function ghPullRequest(
  gh: string,
  cwd: string,
  args: readonly string[],
): Promise<{ url: string; existing: boolean }> {
  const result = await execa(gh, ['pr', 'create', ...args], { cwd, reject: false, stdin: 'ignore' });
  const out = `${String(result.stdout)}\n${String(result.stderr)}`;
  const url = out.match(/https?:\/\/\S+/g)?.at(-1);
  if (result.exitCode === 0 && url) return { url, existing: false };
  if (/already exists/i.test(out) && url) return { url, existing: true };
  throw new GitError(['(gh)', 'pr', 'create'], result.exitCode ?? -1, String(result.stderr || result.stdout));
}

function onPath(command: string): string | null {
  const names = process.platform === 'win32' ? [`${command}.exe`, `${command}.cmd`] : [command];
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    for (const name of names) {
      const file = join(dir, name);
      try {
        accessSync(file, constants.X_OK);
        return file;
      } catch {}
    }
  }
  return null;
}

export function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
