import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { NotFoundError, StateError, TooLargeError } from '../../core/errors.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../core/nesting.js';

/**
 * Where Claude Code keeps its Agent Teams (docs/swarm.md has the formats and their sources):
 * `~/.claude/teams/<team>/config.json` and `~/.claude/tasks/<team>/<id>.json`. CLAUDE_CONFIG_DIR
 * moves `~/.claude`, as it does for Claude Code itself.
 */
export function claudeDir(): string {
  return process.env.CLAUDE_CONFIG_DIR || join(homedir(), '.claude');
}

export function teamsDir(): string {
  return join(claudeDir(), 'teams');
}

export function teamDir(team: string): string {
  return join(teamsDir(), checkTeamName(team));
}

export function tasksDir(team: string): string {
  return join(claudeDir(), 'tasks', checkTeamName(team));
}

/** A team name is one directory: no separators, no dot files. */
function checkTeamName(team: string): string {
  if (!team || team.startsWith('.') || /[/\\\0]/.test(team)) throw new NotFoundError(`no team '${team}'`);
  return team;
}

/** A JSON file; one nested deeper than MAX_JSON_DEPTH is refused (troupe could not write it back). */
export function readJson(path: string): unknown {
  const value: unknown = JSON.parse(readFileSync(path, 'utf8'));
  if (nestsDeeperThan(value, MAX_JSON_DEPTH))
    throw new TooLargeError(`${path} nests deeper than ${MAX_JSON_DEPTH} levels`);
  return value;
}

/** As Claude Code writes them: 2-space JSON and a newline, through a temp file and a rename. */
export function writeJsonAtomic(path: string, value: unknown): void {
  const tmp = `${path}.troupe-${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  try {
    renameSync(tmp, path);
  } catch (error) {
    unlinkSync(tmp);
    throw error;
  }
}

/**
 * Runs `fn` holding a sidecar lock file (O_EXCL; holds the owner's pid, and a dead owner's lock
 * is taken over). Claude Code serializes its own writers with flock(2) on `.lock` files, which
 * Node cannot take without a native module; as AMQ does (`.<team>.amq.lock`), troupe locks a
 * sidecar of its own, so troupe's claimers never race each other, and writes each file with one
 * rename, so a reader never sees half of one.
 */
export function withLock<T>(lockPath: string, fn: () => T): T {
  mkdirSync(dirname(lockPath), { recursive: true, mode: 0o700 });
  for (let tries = 0; ; tries++) {
    try {
      const fd = openSync(lockPath, 'wx', 0o600);
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (ownerIsGone(lockPath)) {
        rmSync(lockPath, { force: true });
        continue;
      }
      if (tries > 200) throw new StateError(`${lockPath} is held by another process`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
  try {
    return fn();
  } finally {
    unlinkSync(lockPath);
  }
}

function ownerIsGone(lockPath: string): boolean {
  try {
    const pid = Number(readFileSync(lockPath, 'utf8'));
    if (!Number.isInteger(pid) || pid <= 0) return false; // being written
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'EPERM';
  }
}
