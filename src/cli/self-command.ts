import { existsSync, realpathSync } from 'node:fs';
import { delimiter, join, relative } from 'node:path';
import { packageRoot } from '../package-root.js';

export interface Invocation {
  env: NodeJS.ProcessEnv;
  cwd: string;
}

/**
 * The command that runs this troupe again from `cwd`, for output that tells the user what to run
 * next: `troupe` when that name on PATH is this troupe (after `npm link`), `npx troupe` when it was
 * started through npx, else `node <path to bin/troupe.js>` (started as `node bin/troupe.js`).
 */
export function troupeCommand(at: Invocation = { env: process.env, cwd: process.cwd() }): string {
  const bin = join(packageRoot(), 'bin', 'troupe.js');
  if (onPath(bin, at.env.PATH ?? '')) return 'troupe';
  if (at.env.npm_command === 'exec') return 'npx troupe';
  return `node ${shellWord(shorter(relative(at.cwd, bin), bin))}`;
}

/**
 * The same, for lines that run somewhere else than here (`launch`'s commands to paste, which
 * `cd` into the project first, and the agents' standing instruction): never a relative path.
 */
export function troupeCommandAnywhere(env: NodeJS.ProcessEnv = process.env): string {
  const bin = join(packageRoot(), 'bin', 'troupe.js');
  if (onPath(bin, env.PATH ?? '')) return 'troupe';
  if (env.npm_command === 'exec') return 'npx troupe';
  return `node ${shellWord(bin)}`;
}

function onPath(bin: string, path: string): boolean {
  const self = realpathSync(bin);
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, 'troupe');
    if (!existsSync(candidate)) continue;
    // the first `troupe` on PATH is the one the shell runs
    return realpathSync(candidate) === self;
  }
  return false;
}

/** A path relative to where the user is, unless the absolute one is shorter. */
export function shorter(rel: string, abs: string): string {
  return rel.length < abs.length ? rel || '.' : abs;
}

function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}
