import { statSync } from 'node:fs';
import { mailbox, missingLeaves, sessionRoots } from './layout.js';

/**
 * The environment that pins a shell to one root (`bus env`, AMQ's `amq env`): every variable of
 * the context, set or unset, so eval'ing it replaces whatever context the shell had.
 */

export const SHELLS = ['sh', 'bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

const ID_PREFIX = 'troupe1:';

/**
 * An opaque token for a directory's physical identity (device and inode): a root deleted and made
 * again, or a path swapped for another tree, no longer matches the token a pinned shell carries.
 */
export function rootIdentity(dir: string): string | undefined {
  try {
    const s = statSync(dir, { bigint: true });
    return `${ID_PREFIX}${s.dev.toString(16)}:${s.ino.toString(16)}`;
  } catch {
    return undefined;
  }
}

/**
 * Whether a pinned token no longer names `dir`. Only troupe's own tokens are compared: an
 * `AM_ROOT_ID` minted by AMQ is opaque to troupe, and never taken for a mismatch.
 */
export function identityChanged(dir: string, token: string | undefined): boolean {
  if (!token?.startsWith(ID_PREFIX)) return false;
  return rootIdentity(dir) !== token;
}

export interface ShellContext {
  root: string;
  baseRoot: string;
  /** Empty when the root is not a session: AMQ writes `AM_SESSION=''` then, so a change is seen. */
  session: string;
  me?: string;
}

/** The variables in the order they are printed; undefined means unset. */
export function contextVariables(c: ShellContext): Array<[string, string | undefined]> {
  return [
    ['AM_ROOT', c.root],
    ['AM_BASE_ROOT', c.baseRoot],
    ['AM_ROOT_ID', rootIdentity(c.root)],
    ['AM_BASE_ROOT_ID', rootIdentity(c.baseRoot)],
    ['AM_SESSION', c.session],
    ['AM_ME', c.me],
  ];
}

export function renderShell(vars: Array<[string, string | undefined]>, shell: Shell): string {
  return vars
    .map(([name, value]) => {
      if (shell === 'fish')
        return value === undefined ? `set -e ${name}` : `set -gx ${name} ${quote(value, shell)}`;
      return value === undefined ? `unset ${name}` : `export ${name}=${quote(value)}`;
    })
    .map((line) => `${line}\n`)
    .join('');
}

/** Single quotes, which both POSIX shells and fish take literally (fish also needs `\\` doubled). */
export function quote(value: string, shell: Shell = 'sh'): string {
  if (shell === 'fish') return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/** The sessions of a base root where any of `handles` has a complete mailbox: where live agents read. */
export function sessionsHolding(baseRoot: string, handles: string[]): string[] {
  return sessionRoots(baseRoot)
    .filter(([, root]) => handles.some((h) => missingLeaves(mailbox(root, h)).length === 0))
    .map(([session]) => session);
}
