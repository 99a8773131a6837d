import { setPriority } from 'node:os';
import { execa } from 'execa';
import { GitError } from './errors.js';

/**
 * Every git call of the workspace layer goes through here: argv arrays (never a shell),
 * no prompts, C locale, and no optional index locks, so reading the state of the user's
 * checkout never competes with the user's own git.
 */

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface GitOptions {
  env?: Record<string, string>;
  /** `key=value` settings passed as `-c` before the command (not shown in a GitError). */
  config?: readonly string[];
  /** Work made ahead of need: it runs at a lower CPU priority than the work a task waits on. */
  background?: boolean;
}

/** The niceness of background git work (0 is normal, 19 the lowest). */
const BACKGROUND_PRIORITY = 10;

const BASE_ENV = { GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C', LANGUAGE: 'C' };

/** Runs git; never throws for a non-zero exit (the caller decides what it means). */
export async function git(
  cwd: string,
  args: readonly string[],
  options: GitOptions = {},
): Promise<GitResult> {
  const settings = (options.config ?? []).flatMap((setting) => ['-c', setting]);
  const running = execa('git', [...settings, ...args], {
    cwd,
    reject: false,
    stdin: 'ignore',
    env: { ...BASE_ENV, ...options.env },
  });
  if (options.background && running.pid !== undefined) {
    try {
      setPriority(running.pid, BACKGROUND_PRIORITY);
    } catch {
      // it may have ended already; a priority is a courtesy
    }
  }
  const result = await running;
  if (result.failed && result.exitCode === undefined) {
    throw new GitError(args, -1, result.message ?? '', 'is git installed and on PATH?');
  }
  return { code: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** Runs git and returns its stdout; a non-zero exit is a GitError. */
export async function gitOk(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<string> {
  const result = await git(cwd, args, options);
  if (result.code !== 0) throw new GitError(args, result.code, result.stderr || result.stdout);
  return result.stdout;
}

/**
 * For writes that take a repository-wide lock (`git config` takes `.git/config.lock`): parallel
 * tasks in one repository may collide, so a lock conflict is retried for up to about two seconds.
 */
export async function gitOkRetryingLock(
  cwd: string,
  args: readonly string[],
  options: GitOptions = {},
): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const result = await git(cwd, args, options);
    if (result.code === 0) return result.stdout;
    if (attempt >= 40 || !/could not lock|\.lock': File exists/i.test(result.stderr)) {
      throw new GitError(args, result.code, result.stderr || result.stdout);
    }
    await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30));
  }
}

/** The commit a revision names, or null when it names none. */
export async function resolveCommit(cwd: string, rev: string): Promise<string | null> {
  const result = await git(cwd, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]);
  return result.code === 0 ? result.stdout.trim() : null;
}

export async function refExists(cwd: string, ref: string): Promise<boolean> {
  return (await git(cwd, ['show-ref', '--verify', '--quiet', ref])).code === 0;
}

/** Whether `ancestor` is reachable from `descendant` (every commit of it is in there). */
export async function isAncestor(cwd: string, ancestor: string, descendant: string): Promise<boolean> {
  const result = await git(cwd, ['merge-base', '--is-ancestor', ancestor, descendant]);
  if (result.code === 0) return true;
  if (result.code === 1) return false;
  throw new GitError(['merge-base', '--is-ancestor', ancestor, descendant], result.code, result.stderr);
}

/**
 * Author and committer for commits troupe makes: the environment's GIT_AUTHOR_* / GIT_COMMITTER_*
 * or git's configured user win; without either, `troupe <troupe@localhost>` (git would refuse).
 */
export async function identityEnv(cwd: string): Promise<Record<string, string>> {
  const configured = await git(cwd, ['config', '--get-regexp', '^user\\.(name|email)$']);
  const keys = new Set(configured.stdout.split('\n').map((line) => line.split(' ')[0]?.toLowerCase()));
  const env: Record<string, string> = {};
  const e = process.env;
  if (!keys.has('user.name')) {
    if (!e.GIT_AUTHOR_NAME) env.GIT_AUTHOR_NAME = 'troupe';
    if (!e.GIT_COMMITTER_NAME) env.GIT_COMMITTER_NAME = 'troupe';
  }
  if (!keys.has('user.email')) {
    if (!e.GIT_AUTHOR_EMAIL) env.GIT_AUTHOR_EMAIL = 'troupe@localhost';
    if (!e.GIT_COMMITTER_EMAIL) env.GIT_COMMITTER_EMAIL = 'troupe@localhost';
  }
  return env;
}
