import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { errno, exists } from './durable.js';
import { CollisionError } from './errors.js';

/**
 * Moves `new/<name>` to `cur/<name>`; exactly one of any number of concurrent claimers gets
 * 'claimed', the others 'lost'. rename() is the single-winner step; it would replace an existing
 * `cur/<name>`, so that case is checked first and reported as a collision with both files kept.
 * The caller fsyncs `cur/` and `new/` (once per batch).
 */
export function claim(newDir: string, curDir: string, name: string): 'claimed' | 'lost' {
  const source = join(newDir, name);
  const dest = join(curDir, name);
  if (exists(dest)) {
    // Either we lost the race just now (the source is gone), or a true collision.
    if (!exists(source)) return 'lost';
    throw new CollisionError(dest);
  }
  try {
    renameSync(source, dest);
    return 'claimed';
  } catch (error) {
    if (errno(error) === 'ENOENT') return 'lost';
    throw error;
  }
}
