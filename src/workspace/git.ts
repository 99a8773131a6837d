import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { GitError } from './errors.js';
import { awaitLockTurn, lockNamedIn } from './git-locks.js';

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

/**
 * Runs git; never throws for a non-zero exit (the caller decides what it means). Spawned by
 * node:child_process itself: a plan runs hundreds of these, and what a wrapper adds to each
 * spawn is main-thread time every task of the process waits on (bench/plan-graph.js).
 */
export async function git(
  cwd: string,
  args: readonly string[],
  options: GitOptions = {},
): Promise<GitResult> {
  const settings = (options.config ?? []).flatMap((setting) => ['-c', setting]);
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...settings, ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...BASE_ENV, ...options.env },
    });
    if (options.background && child.pid !== undefined) {
      try {
        setPriority(child.pid, BACKGROUND_PRIORITY);
      } catch {
        // it may have ended already; a priority is a courtesy
      }
    }
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.once('error', (error) =>
      reject(new GitError(args, -1, error.message, 'is git installed and on PATH?')),
    );
    child.once('close', (code, signal) => {
      const err = withoutFinalNewline(Buffer.concat(stderr).toString('utf8'));
      if (code === null) {
        reject(new GitError(args, -1, err || `ended by ${signal}`));
        return;
      }
      resolve({ code, stdout: withoutFinalNewline(Buffer.concat(stdout).toString('utf8')), stderr: err });
    });
  });
}

/** As a shell's `$(…)` reads output: one final newline off. */
function withoutFinalNewline(text: string): string {
  if (text.endsWith('\r\n')) return text.slice(0, -2);
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

/** Runs git and returns its stdout; a non-zero exit is a GitError. */
export async function gitOk(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<string> {
  const result = await git(cwd, args, options);
  if (result.code !== 0) throw new GitError(args, result.code, result.stderr || result.stdout);
  return result.stdout;
}

/**
 * For writes that take a repository-wide lock (`git config` takes `.git/config.lock`): parallel
 * tasks in one repository may collide, so a lock conflict is asked again (git-locks.ts says how
 * long, and clears a config lock a killed writer left).
 */
export async function gitOkRetryingLock(
  cwd: string,
  args: readonly string[],
  options: GitOptions = {},
): Promise<string> {
  const since = Date.now();
  for (;;) {
    const result = await git(cwd, args, options);
    if (result.code === 0) return result.stdout;
    const lock = lockNamedIn(result.stderr, cwd);
    if (!lock || !(await awaitLockTurn(lock, since))) {
      throw new GitError(args, result.code, result.stderr || result.stdout);
    }
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

/** Whether a branch or a tag holds `commit` (it is lost to no garbage collection). */
export async function heldByRef(cwd: string, commit: string): Promise<boolean> {
  const held = await git(cwd, ['for-each-ref', '--count=1', '--contains', commit, 'refs/heads', 'refs/tags']);
  return held.code === 0 && held.stdout.trim() !== '';
}

/** Whether `ancestor` is reachable from `descendant` (every commit of it is in there). */
export async function isAncestor(cwd: string, ancestor: string, descendant: string): Promise<boolean> {
  const result = await git(cwd, ['merge-base', '--is-ancestor', ancestor, descendant]);
  if (result.code === 0) return true;
  if (result.code === 1) return false;
  throw new GitError(['merge-base', '--is-ancestor', ancestor, descendant], result.code, result.stderr);
}

/**
 * The user keys a repository's config sets, read once in a while per repository (`key`: its
 * common dir, or a worktree's path): a plan commits hundreds of times a minute in one repository,
 * and an identity set meanwhile is seen within IDENTITY_TTL_MS.
 */
const configuredUsers = new Map<string, { at: number; keys: Promise<Set<string>> }>();
const IDENTITY_TTL_MS = 10_000;

function configuredUserKeys(cwd: string, key: string): Promise<Set<string>> {
  const known = configuredUsers.get(key);
  if (known && Date.now() - known.at < IDENTITY_TTL_MS) return known.keys;
  const keys = git(cwd, ['config', '--get-regexp', '^user\\.(name|email)$']).then(
    (configured) =>
      new Set(configured.stdout.split('\n').map((line) => line.split(' ', 1)[0]!.toLowerCase())),
  );
  configuredUsers.set(key, { at: Date.now(), keys });
  keys.catch(() => configuredUsers.delete(key));
  return keys;
}

/**
 * Author and committer for commits troupe makes: the environment's GIT_AUTHOR_* / GIT_COMMITTER_*
 * or git's configured user win; without either, `troupe <troupe@localhost>` (git would refuse).
 * `commonDir`: the repository's, when the caller knows it (its worktrees share the answer).
 */
export async function identityEnv(cwd: string, commonDir?: string): Promise<Record<string, string>> {
  const keys = await configuredUserKeys(cwd, commonDir ?? cwd);
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
