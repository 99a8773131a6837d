import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The installed package's own directory (where package.json, examples/ and schema/ live),
 * found by walking up from this module: the same answer from dist/ modules and from the
 * bundled CLI, wherever each sits.
 */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('troupe: cannot find its own package.json');
    dir = parent;
  }
  return dir;
}

let version: string | undefined;

/** This troupe's version (package.json's), read once. */
export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string })
    .version;
  return version;
}
