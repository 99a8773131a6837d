import { realpathSync } from 'node:fs';
import path from 'node:path';

export type Containment =
  | { kind: 'inside'; path: string }
  | { kind: 'outside' }
  /** Inside by its name, but nothing is there (or a link leads nowhere). */
  | { kind: 'missing' };

/**
 * Where `file` (relative to `root`, or absolute) really is, if that is inside `root`. A path
 * that leaves `root` by its name is `outside` before the file system is asked, so the answer
 * says nothing about what exists out there; one inside by name is then followed through its
 * symlinks, and is `outside` too when they lead out.
 */
export function containedPath(root: string, file: string): Containment {
  if (file.includes('\0')) return { kind: 'outside' };
  const base = path.resolve(root);
  const named = path.resolve(base, file);
  if (!isWithin(base, named)) return { kind: 'outside' };
  let real: string;
  try {
    real = realpathSync(named);
  } catch {
    return { kind: 'missing' };
  }
  return isWithin(realpathSync(base), real) ? { kind: 'inside', path: real } : { kind: 'outside' };
}

function isWithin(dir: string, file: string): boolean {
  const rel = path.relative(dir, file);
  return rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}
