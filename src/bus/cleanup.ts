import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isTmpLeftover } from './ids.js';
import { mailboxHandles } from './layout.js';

/**
 * Leftover delivery attempts and temp files older than `olderThanMs`: everything in `inbox/tmp`
 * and `dlq/tmp`, and any `.*.tmp-*` file elsewhere in a mailbox. Extension directories are never
 * touched. Returns the paths (removed unless `dryRun`).
 */
export function cleanupTmp(root: string, olderThanMs: number, dryRun = false): string[] {
  const cutoff = Date.now() - olderThanMs;
  const found: string[] = [];
  const visit = (dir: string, all: boolean) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name === 'extensions') continue;
        visit(path, all || e.name === 'tmp');
        continue;
      }
      if (!all && !isTmpLeftover(e.name)) continue;
      try {
        if (lstatSync(path).mtimeMs < cutoff) found.push(path);
      } catch {
        // gone meanwhile
      }
    }
  };
  for (const handle of mailboxHandles(root)) visit(join(root, 'agents', handle), false);
  if (!dryRun) for (const path of found) rmSync(path, { force: true });
  return found.sort();
}

/** AMQ's quarantined wake artifacts: `agents/<h>/.wake.<lock|target>.quarantined.<timestamp>`. */
const QUARANTINED = /^\.wake\.(lock|target)\.quarantined\..+$/;

/**
 * Quarantined wake files older than `olderThanMs` (by mtime). troupe's wake quarantines nothing,
 * but a root shared with AMQ may hold AMQ's; only files of exactly that name are touched.
 * Returns the paths (removed unless `dryRun`).
 */
export function cleanupWakeQuarantine(root: string, olderThanMs: number, dryRun = false): string[] {
  const cutoff = Date.now() - olderThanMs;
  const found: string[] = [];
  for (const handle of mailboxHandles(root)) {
    const dir = join(root, 'agents', handle);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!QUARANTINED.test(name)) continue;
      const path = join(dir, name);
      try {
        const stat = lstatSync(path);
        if (stat.isFile() && stat.mtimeMs < cutoff) found.push(path);
      } catch {
        // gone meanwhile
      }
    }
  }
  if (!dryRun) for (const path of found) rmSync(path, { force: true });
  return found.sort();
}
