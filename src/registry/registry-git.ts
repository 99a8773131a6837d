import { type GitOptions, type GitResult, git, gitOk, gitOkRetryingLock } from '../workspace/git.js';

/**
 * Git in a registry's repository, whose `.git/config` and hooks may be someone else's: none of
 * its hooks run (`post-commit`, `prepare-commit-msg`, `reference-transaction`,
 * `post-index-change`, … all live under core.hooksPath), nor its fsmonitor, nor a signing program it names. Every git command troupe runs in
 * a registry goes through here.
 */
const HARDENED = ['core.hooksPath=/dev/null', 'core.fsmonitor=false', 'commit.gpgSign=false'];

/**
 * For a push to a registry on this machine: git starts the receiving side with a clean
 * environment (no `-c`), so its receive hooks would run as the user; this receive-pack skips them.
 */
export const HARDENED_RECEIVE_PACK = `--receive-pack=git ${HARDENED.map((s) => `-c ${s}`).join(' ')} receive-pack`;

export function registryGit(
  cwd: string,
  args: readonly string[],
  options: GitOptions = {},
): Promise<GitResult> {
  return git(cwd, args, { ...options, config: HARDENED });
}

export function registryGitOk(
  cwd: string,
  args: readonly string[],
  options: GitOptions = {},
): Promise<string> {
  return gitOk(cwd, args, { ...options, config: HARDENED });
}

export function registryGitOkRetryingLock(cwd: string, args: readonly string[]): Promise<string> {
  return gitOkRetryingLock(cwd, args, { config: HARDENED });
}
