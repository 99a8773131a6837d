import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { printable } from '../core/printable.js';
import { RegistryError } from './errors.js';

/**
 * A registry's files are someone else's: nothing in one is followed (a symbolic link could point
 * anywhere on this machine) and nothing is read before its size is known from lstat, so a huge
 * file is refused without being read. The caps are documented in docs/registry.md.
 */
export const FILE_LIMIT = 1024 * 1024;
export const PIPELINE_LIMIT = 10 * 1024 * 1024;
/** index.json lists every pipeline of a registry, so it gets more room than one pipeline's file. */
export const INDEX_LIMIT = 16 * 1024 * 1024;

export type EntryKind = 'file' | 'directory' | 'symlink' | 'other' | 'absent';

/** What is at `p` itself, a symbolic link not followed. */
export function entryKind(p: string): EntryKind {
  const stat = lstatSync(p, { throwIfNoEntry: false });
  if (!stat) return 'absent';
  if (stat.isSymbolicLink()) return 'symlink';
  return stat.isFile() ? 'file' : stat.isDirectory() ? 'directory' : 'other';
}

/** A folder of the registry, or a RegistryError when something else (a symbolic link) stands there. */
export function assertFolder(p: string): void {
  const kind = entryKind(p);
  if (kind !== 'directory') throw new RegistryError(`${shown(p)} is ${describe(kind)}, not a folder`);
}

/** A regular file's text, refused when it is a symbolic link or larger than `limit`; undefined when absent. */
export function readRegistryFile(p: string, limit = FILE_LIMIT): string | undefined {
  const stat = lstatSync(p, { throwIfNoEntry: false });
  if (!stat) return undefined;
  if (!stat.isFile()) {
    throw new RegistryError(`${shown(p)} is ${describe(stat.isSymbolicLink() ? 'symlink' : 'other')}`);
  }
  if (stat.size > limit) throw tooLarge(p, stat.size, limit);
  return readFileSync(p, 'utf8');
}

/**
 * Every regular file under `dir`, relative, with `/`, sorted; with `flat`, only those directly in
 * it. A symbolic link, a special file, a name with control characters, a file over FILE_LIMIT or
 * a folder over PIPELINE_LIMIT in all is refused, before any file is read.
 */
export function listFiles(dir: string, options: { flat?: boolean; skip?: string[] } = {}): string[] {
  let total = 0;
  const walk = (prefix: string): string[] =>
    readdirSync(path.join(dir, prefix), { withFileTypes: true })
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .flatMap((entry) => {
        const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
        const full = path.join(dir, rel);
        if (/[\u0000-\u001f\u007f-\u009f]/.test(entry.name)) {
          throw new RegistryError(`${shown(full)} has control characters in its name`);
        }
        if (!prefix && options.skip?.includes(entry.name)) return [];
        const stat = lstatSync(full);
        if (stat.isDirectory()) return options.flat ? [] : walk(rel);
        if (!stat.isFile()) {
          throw new RegistryError(
            `${shown(full)} is ${describe(stat.isSymbolicLink() ? 'symlink' : 'other')}; a pipeline folder holds files only`,
          );
        }
        if (stat.size > FILE_LIMIT) throw tooLarge(full, stat.size, FILE_LIMIT);
        total += stat.size;
        if (total > PIPELINE_LIMIT) {
          throw new RegistryError(`${shown(dir)} holds more than ${mib(PIPELINE_LIMIT)} of files`, {
            hint: `a pipeline is at most ${mib(PIPELINE_LIMIT)}, each file at most ${mib(FILE_LIMIT)}`,
          });
        }
        return [rel];
      });
  return walk('');
}

function tooLarge(p: string, size: number, limit: number): RegistryError {
  return new RegistryError(`${shown(p)} is ${mib(size)}, over the ${mib(limit)} a registry file may be`, {
    hint: `a pipeline is at most ${mib(PIPELINE_LIMIT)}, each file at most ${mib(FILE_LIMIT)}`,
  });
}

function describe(kind: EntryKind): string {
  const said: Record<EntryKind, string> = {
    symlink: 'a symbolic link',
    absent: 'missing',
    file: 'a file',
    directory: 'a folder',
    other: 'not a regular file',
  };
  return said[kind];
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes % (1024 * 1024) === 0 ? 0 : 1)} MiB`;
}

function shown(p: string): string {
  return printable(p);
}
