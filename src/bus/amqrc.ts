import { lstatSync, readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, resolve } from 'node:path';
import { messageOf } from '../core/errors.js';
import { AmqrcError } from './errors.js';

export interface Amqrc {
  file: string;
  /** Absolute: `root` resolved against the directory holding the file. */
  root: string;
  /** Declared, else the directory's basename (empty for `~/.amqrc`). */
  project: string;
  /** Peer project name → absolute root. */
  peers: Record<string, string>;
}

/**
 * Reads an `.amqrc` with AMQ's rules: a regular file (not a symlink), owned by us, not group- or
 * world-writable, JSON `{"root", "project"?, "peers"?}`. Anything else throws AmqrcError.
 */
export function loadAmqrc(file: string, home?: string): Amqrc {
  const stat = lstatSync(file);
  if (stat.isSymbolicLink()) throw new AmqrcError(file, 'is a symlink');
  if (!stat.isFile()) throw new AmqrcError(file, 'is not a regular file');
  if (typeof process.geteuid === 'function' && stat.uid !== process.geteuid()) {
    throw new AmqrcError(file, 'is not owned by the current user');
  }
  if (stat.mode & 0o022) throw new AmqrcError(file, 'is group- or world-writable');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new AmqrcError(file, `invalid JSON: ${messageOf(error)}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new AmqrcError(file, 'expected a JSON object');
  const rc = raw as Record<string, unknown>;
  if (typeof rc.root !== 'string' || rc.root.trim() === '')
    throw new AmqrcError(file, '"root" must be a non-empty string');
  if (rc.project !== undefined && typeof rc.project !== 'string')
    throw new AmqrcError(file, '"project" must be a string');
  const dir = dirname(file);
  const peers: Record<string, string> = {};
  if (rc.peers !== undefined) {
    if (!rc.peers || typeof rc.peers !== 'object' || Array.isArray(rc.peers)) {
      throw new AmqrcError(file, '"peers" must be an object of name → root');
    }
    for (const [name, path] of Object.entries(rc.peers)) {
      if (typeof path !== 'string' || path === '')
        throw new AmqrcError(file, `peer "${name}" must be a path`);
      peers[name] = isAbsolute(path) ? path : resolve(dir, path);
    }
  }
  const isHome = home !== undefined && resolve(dir) === resolve(home);
  return {
    file,
    root: isAbsolute(rc.root) ? rc.root : resolve(dir, rc.root),
    project: typeof rc.project === 'string' && rc.project !== '' ? rc.project : isHome ? '' : basename(dir),
    peers,
  };
}
