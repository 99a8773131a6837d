import { closeSync, lstatSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { StateError } from '../core/errors.js';
import { awaitLockTurn } from './git-locks.js';

/**
 * Keys of a branch git knows nothing about yet, written into the repository's config in one go,
 * the way `git config` writes it (under `config.lock`, renamed over the file): one write instead
 * of a `git config` process per key, each taking that lock in turn. False (nothing written) when
 * the config already has a section for the branch, or is not a plain file: `git config` then.
 */
export async function appendBranchSection(
  gitDir: string,
  branch: string,
  keys: readonly [string, string][],
): Promise<boolean> {
  const file = join(gitDir, 'config');
  const stat = lstatSync(file, { throwIfNoEntry: false });
  if (!stat?.isFile()) return false;
  const lockPath = `${file}.lock`;
  const lock = await takeLock(lockPath, stat.mode & 0o777);
  let written = false;
  try {
    const text = readFileSync(file, 'utf8');
    const header = `[branch "${quoted(branch)}"]`;
    if (text.split('\n').some((line) => line.trim() === header)) return false;
    const lines = keys.map(([key, value]) => `\t${key} = "${quoted(value)}"`);
    const prefix = text.length > 0 && !text.endsWith('\n') ? '\n' : '';
    writeSync(lock, `${text}${prefix}${header}\n${lines.join('\n')}\n`);
    written = true;
  } finally {
    closeSync(lock);
    if (!written) rmSync(lockPath, { force: true });
  }
  try {
    renameSync(lockPath, file);
  } catch (error) {
    rmSync(lockPath, { force: true });
    throw error;
  }
  return true;
}

/** A value or subsection name inside double quotes: `"` and `\` escaped (refs hold no newline). */
function quoted(value: string): string {
  return value.replace(/[\\"]/g, (c) => `\\${c}`);
}

/** `config.lock`, made exclusively like git does; taken by another writer, waited for (git-locks.ts). */
async function takeLock(path: string, mode: number): Promise<number> {
  const since = Date.now();
  for (;;) {
    try {
      return openSync(path, 'wx', mode);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (!(await awaitLockTurn(path, since))) {
        throw new StateError(`${path} is held by another writer`, {
          hint: 'if no git command is running in this repository, remove the file',
        });
      }
    }
  }
}
