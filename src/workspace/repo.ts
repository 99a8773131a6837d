import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { git, gitOk } from './git.js';

/**
 * The repository a directory belongs to: the top level of its main checkout (also when `cwd` is
 * inside one of its linked worktrees, troupe's own included), or null outside git.
 */
export async function findRepo(cwd: string): Promise<string | null> {
  const top = await git(cwd, ['rev-parse', '--show-toplevel']);
  if (top.code !== 0 || !top.stdout.trim()) return null;
  const toplevel = top.stdout.trim();
  const common = await git(toplevel, ['rev-parse', '--git-common-dir']);
  if (common.code === 0) {
    const dir = resolve(toplevel, common.stdout.trim());
    // a linked worktree's common dir is the main checkout's `.git`
    if (basename(dir) === '.git' && dirname(dir) !== toplevel && existsSync(dirname(dir))) {
      return realpathSync(dirname(dir));
    }
  }
  return realpathSync(toplevel);
}

/** Uncommitted changes (staged, unstaged or untracked, not ignored) in a checkout. */
export async function isDirty(path: string): Promise<boolean> {
  const status = await gitOk(path, ['status', '--porcelain', '-z', '--untracked-files=normal']);
  return status.length > 0;
}

export interface UncommittedFile {
  /** Relative to the checkout. */
  path: string;
  untracked: boolean;
}

/** What `isDirty` sees, file by file (an untracked directory's files one by one), in git's order. */
export async function uncommittedFiles(path: string): Promise<UncommittedFile[]> {
  const records = (await gitOk(path, ['status', '--porcelain', '-z', '--untracked-files=all'])).split('\0');
  const files: UncommittedFile[] = [];
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    if (record.length < 4) continue;
    files.push({ path: record.slice(3), untracked: record.startsWith('??') });
    // a rename or copy is followed by the path it came from
    if (/^[RC]|^.[RC]/.test(record)) i++;
  }
  return files;
}

/** The branch a checkout has checked out (short name), or null when detached. */
export async function currentBranch(path: string): Promise<string | null> {
  const result = await git(path, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
  return result.code === 0 ? result.stdout.trim() : null;
}

/** Where troupe keeps task worktrees (`<task>` and fan-out `<task>--<agent>`). */
export function worktreesDir(repo: string): string {
  return join(repo, '.troupe', 'worktrees');
}

/** Short-lived checkouts: verifier checkouts and merge scratch space. */
export function scratchDir(repo: string): string {
  return join(repo, '.troupe', 'tmp');
}

/** What a scratch checkout is for: a verifier's (or one made ahead), or a merge's. */
export type ScratchKind = 'verify' | 'merge';

/** A new scratch checkout's path, `.troupe/tmp/<kind>-<task>-<random>` (the directory is made). */
export function newScratchPath(repo: string, kind: ScratchKind, taskId: string): string {
  mkdirSync(scratchDir(repo), { recursive: true });
  return join(scratchDir(repo), `${kind}-${taskId}-${randomBytes(4).toString('hex')}`);
}

/** The kind and task a scratch checkout's directory name says, or null for no such name. */
export function parseScratchName(name: string): { kind: ScratchKind; task: string } | null {
  const match = /^(verify|merge)-(.+)-[0-9a-f]{8}$/.exec(name);
  return match ? { kind: match[1] as ScratchKind, task: match[2]! } : null;
}

/**
 * troupe's own state under `.troupe/` (worktrees, scratch checkouts, the task store, task files)
 * is ignored in `info/exclude` (shared by every worktree, never the user's .gitignore), so it
 * neither makes the main checkout look dirty nor lands in a commit. The files people write —
 * pipelines, config, params, scripts — stay visible and committable.
 */
export const EXCLUDED = [
  '/.troupe/*',
  '!/.troupe/.gitignore',
  '!/.troupe/pipelines/',
  '!/.troupe/config.yaml',
  '!/.troupe/params.yaml',
  // troupe init's script for the scripted runtime, named by config.yaml
  '!/.troupe/scripts/',
  // the mailboxes troupe makes when it asks a person (bus/task-mail.ts): not the user's changes
  '/.agent-mail/',
] as const;

/** The repository's common git directory (`.git` of the main checkout, shared by its worktrees). */
export function commonDir(repo: string): Promise<string> {
  let dir = commonDirs.get(repo);
  if (!dir) {
    dir = gitOk(repo, ['rev-parse', '--git-common-dir']).then((out) => resolve(repo, out.trim()));
    dir.catch(() => commonDirs.delete(repo));
    commonDirs.set(repo, dir);
  }
  return dir;
}

/** Asked once per repository in a process: where its git directory is does not change under it. */
const commonDirs = new Map<string, Promise<string>>();

export async function ensureExcluded(repo: string): Promise<void> {
  const file = join(await commonDir(repo), 'info', 'exclude');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const lines = new Set(text.split('\n').map((l) => l.trim()));
  const missing = EXCLUDED.filter((pattern) => !lines.has(pattern));
  if (missing.length === 0) return;
  mkdirSync(dirname(file), { recursive: true });
  const prefix = text.length > 0 && !text.endsWith('\n') ? '\n' : '';
  appendFileSync(file, `${prefix}# troupe worktrees (added by troupe)\n${missing.join('\n')}\n`);
}
