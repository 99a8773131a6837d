import { type GitOptions, type GitResult, git, gitOk, gitOkRetryingLock } from '../workspace/git.js';
import { RegistryError } from './errors.js';

/**
 * Git in a registry's repository, whose `.git/config` and hooks may be someone else's: none of
 * its hooks run (`post-commit`, `prepare-commit-msg`, `reference-transaction`,
 * `post-index-change`, … all live under core.hooksPath), nor its fsmonitor, nor a signing
 * program it names. Every git command troupe runs in a registry goes through here.
 */
const HARDENED = ['core.hooksPath=/dev/null', 'core.fsmonitor=false', 'commit.gpgSign=false'];

/**
 * For a push to a registry on this machine: git starts the receiving side with a clean
 * environment (no `-c`), so its receive hooks would run as the user; this receive-pack skips them.
 */
export const HARDENED_RECEIVE_PACK = `--receive-pack=git ${HARDENED.map((s) => `-c ${s}`).join(' ')} receive-pack`;

function hardened(options: GitOptions): GitOptions {
  return { ...options, config: [...HARDENED, ...(options.config ?? [])] };
}

export function registryGit(
  cwd: string,
  args: readonly string[],
  options: GitOptions = {},
): Promise<GitResult> {
  return git(cwd, args, hardened(options));
}

export function registryGitOk(
  cwd: string,
  args: readonly string[],
  options: GitOptions = {},
): Promise<string> {
  return gitOk(cwd, args, hardened(options));
}

export function registryGitOkRetryingLock(cwd: string, args: readonly string[]): Promise<string> {
  return gitOkRetryingLock(cwd, args, hardened({}));
}

/**
 * Settings that switch off every filter driver a repository's config defines: its
 * `.gitattributes` can name any of them, and git runs a driver's `clean` or `process` command on
 * add, status and commit. An empty command is no filter; `required=false` lets that pass.
 */
export async function filterDriversOff(cwd: string): Promise<string[]> {
  const listed = await registryGit(cwd, [
    'config',
    '--includes',
    '--name-only',
    '--get-regexp',
    '^filter\\.',
  ]);
  const drivers = new Set<string>();
  for (const key of listed.stdout.split('\n')) {
    const driver = /^filter\.(.+)\.[^.]+$/.exec(key.trim())?.[1];
    if (driver === undefined) continue;
    // `-c` splits at the first `=`: such a driver could not be switched off
    if (driver.includes('=')) {
      throw new RegistryError(
        `registry ${cwd} defines a filter driver named "${driver}"; nothing was published`,
      );
    }
    drivers.add(driver);
  }
  return [...drivers].flatMap((d) => [
    ...['clean', 'smudge', 'process'].map((key) => `filter.${d}.${key}=`),
    `filter.${d}.required=false`,
  ]);
}
