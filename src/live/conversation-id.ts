import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

/**
 * The id of the codex conversation that began with troupe's standing instruction, found by its
 * launch nonce in codex's session files (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`,
 * whose first line is `{"type":"session_meta","payload":{"id":…}}`). Codex prints its id nowhere a
 * launcher can read, and cannot be given one; the nonce makes the match exact even with several
 * codex agents in one directory. Only files changed since `since` are read.
 */
export function findCodexConversation(
  nonce: string,
  since: number,
  env: NodeJS.ProcessEnv = process.env,
): string | null {
  const sessions = join(env.CODEX_HOME ?? join(env.HOME ?? homedir(), '.codex'), 'sessions');
  for (const file of rolloutFiles(sessions, since)) {
    const head = readStart(file, 256 * 1024);
    if (!head.includes(nonce)) continue;
    try {
      const meta = JSON.parse(head.slice(0, head.indexOf('\n'))) as { payload?: { id?: unknown } };
      if (typeof meta.payload?.id === 'string') return meta.payload.id;
    } catch {
      // not the first line we know: the file name still carries the id
    }
    return file.match(UUID)?.[0] ?? null;
  }
  return null;
}

function rolloutFiles(dir: string, since: number): string[] {
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return rolloutFiles(path, since);
    if (!e.name.endsWith('.jsonl')) return [];
    try {
      return statSync(path).mtimeMs >= since ? [path] : [];
    } catch {
      return [];
    }
  });
}

function readStart(file: string, max: number): string {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(max);
    const n = readSync(fd, buf, 0, max, 0);
    return buf.toString('utf8', 0, n);
  } finally {
    closeSync(fd);
  }
}
