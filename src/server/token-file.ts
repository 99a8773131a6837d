import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { generateToken } from './auth.js';

/**
 * `troupe serve`'s token when none is given: one per project and user, made once (32 random
 * bytes) and kept where only that user can read it — `$XDG_STATE_HOME/troupe/tokens/<project>`
 * (default `~/.local/state`), the folder 0700 and the file 0600 — so the same token serves every
 * restart and no other user of the machine can learn it.
 */
export function projectToken(root: string): { token: string; file: string } {
  const state = process.env.XDG_STATE_HOME || path.join(homedir(), '.local', 'state');
  const dir = path.join(state, 'troupe', 'tokens');
  const id = createHash('sha256').update(realpathSync(root)).digest('hex').slice(0, 24);
  const file = path.join(dir, id);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  try {
    const token = readFileSync(file, 'utf8').trim();
    // a file others could read is not this user's secret any more: make a new one
    if (token.length >= 32 && (statSync(file).mode & 0o077) === 0) return { token, file };
  } catch {
    // none yet
  }
  const token = generateToken();
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return { token, file };
}
