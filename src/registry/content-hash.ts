import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { listFiles } from './registry-files.js';

/** `sha256:<hex>` of each file of a folder (by its path inside, with `/`), and of the whole. */
export interface ContentHash {
  hash: string;
  files: Record<string, string>;
}

/**
 * The hash of a folder's content: each regular file's sha256, and a sha256 over the sorted
 * `<hex>  <path>` lines (sha256sum's output), so the whole changes when any file is
 * added, removed, renamed or edited. A symbolic link is refused (it could point anywhere), and so
 * is a file or folder over the size caps (registry-files.ts).
 */
export function hashFolder(dir: string): ContentHash {
  return hashFiles(dir, listFiles(dir));
}

/** The same hash over the given files of `dir` only. */
export function hashFiles(dir: string, names: readonly string[]): ContentHash {
  const files: Record<string, string> = {};
  for (const rel of [...names].sort()) files[rel] = sha256(readFileSync(path.join(dir, rel)));
  return { hash: combinedHash(files), files };
}

export function combinedHash(files: Record<string, string>): string {
  const lines = Object.keys(files)
    .sort()
    .map((rel) => `${files[rel]!.slice('sha256:'.length)}  ${rel}\n`);
  return sha256(lines.join(''));
}

/** The files that differ between what was recorded and what is there: changed, missing or added. */
export function changedFiles(recorded: Record<string, string>, actual: Record<string, string>): string[] {
  const names = new Set([...Object.keys(recorded), ...Object.keys(actual)]);
  return [...names].filter((rel) => recorded[rel] !== actual[rel]).sort();
}

export function sha256(data: string | Buffer): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}
