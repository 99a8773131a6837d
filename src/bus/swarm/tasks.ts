import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { NotFoundError, StateError } from '../../core/errors.js';
import { claudeDir, readJson, tasksDir, withLock, writeJsonAtomic } from './files.js';

/**
 * A team's shared task list, one file per task as Claude Code writes it:
 * `~/.claude/tasks/<team>/<id>.json` with `id`, `subject`, `description`, `status`
 * (`pending` | `in_progress` | `completed`), `owner` (a member's name, empty when free),
 * `blocks` and `blockedBy` (task ids). AMQ's older spellings (`title`, `assigned_to`,
 * `depends_on`, and a `tasks.json` holding `{tasks: [...]}`) are read too.
 */

export interface TeamTask {
  id: string;
  subject: string;
  status: string;
  owner: string;
  blockedBy: string[];
  file: string;
}

type Raw = Record<string, unknown>;

const str = (value: unknown): string =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
const ids = (value: unknown): string[] => (Array.isArray(value) ? value.map(str).filter(Boolean) : []);

function task(raw: Raw, file: string): TeamTask {
  return {
    id: str(raw.id),
    subject: str(raw.subject) || str(raw.title),
    status: str(raw.status) || 'pending',
    owner: str(raw.owner) || str(raw.assigned_to),
    blockedBy: raw.blockedBy !== undefined ? ids(raw.blockedBy) : ids(raw.depends_on),
    file,
  };
}

/** Every task file's raw objects: a task per file, or the `{tasks: [...]}` of a list file. */
function rawTasks(team: string): Array<{ file: string; raw: Raw; holder: Raw }> {
  const dir = tasksDir(team);
  if (!existsSync(dir)) return [];
  const found: Array<{ file: string; raw: Raw; holder: Raw }> = [];
  for (const name of readdirSync(dir).sort(byNumber)) {
    if (name.startsWith('.') || !name.endsWith('.json')) continue;
    const file = join(dir, name);
    let raw: unknown;
    try {
      raw = readJson(file);
    } catch {
      continue; // being written, or not a task: Claude Code's own readers skip it too
    }
    if (typeof raw !== 'object' || raw === null) continue;
    const holder = raw as Raw;
    if (Array.isArray(holder.tasks))
      for (const t of holder.tasks as Raw[]) found.push({ file, raw: t, holder });
    else if (str(holder.id)) found.push({ file, raw: holder, holder });
  }
  return found;
}

function byNumber(a: string, b: string): number {
  return Number.parseInt(a, 10) - Number.parseInt(b, 10) || a.localeCompare(b);
}

export function listTasks(team: string): TeamTask[] {
  return rawTasks(team).map((t) => task(t.raw, t.file));
}

/** AMQ's lock beside the task directories, so a watcher of the team's directory sees no lock churn. */
function tasksLock(team: string): string {
  return join(claudeDir(), 'tasks', `.${team}.troupe.lock`);
}

/**
 * `handle` takes a task: it must be free (or already its own), not completed, and every task it
 * is blocked by completed; then `owner` is the handle and `status` in_progress.
 */
export function claimTask(team: string, id: string, handle: string): TeamTask {
  return updateTask(team, id, (raw, all) => {
    const t = task(raw, '');
    if (t.status === 'completed') throw new StateError(`task ${id} of team ${team} is already completed`);
    if (t.owner && t.owner.toLowerCase() !== handle)
      throw new StateError(`task ${id} of team ${team} is already claimed by ${t.owner}`);
    const open = t.blockedBy.filter((dep) => all.find((o) => o.id === dep)?.status !== 'completed');
    if (open.length > 0)
      throw new StateError(`task ${id} of team ${team} is blocked by unfinished task(s) ${open.join(', ')}`);
    raw.owner = handle;
    raw.status = 'in_progress';
  });
}

/** `handle` is done with a task it holds: `status` completed. */
export function completeTask(team: string, id: string, handle: string): TeamTask {
  return updateTask(team, id, (raw) => {
    const t = task(raw, '');
    if (t.status !== 'in_progress')
      throw new StateError(`task ${id} of team ${team} is ${t.status}, not in_progress`);
    if (t.owner.toLowerCase() !== handle)
      throw new StateError(`task ${id} of team ${team} is claimed by ${t.owner}, not ${handle}`);
    raw.status = 'completed';
  });
}

function updateTask(team: string, id: string, change: (raw: Raw, all: TeamTask[]) => void): TeamTask {
  return withLock(tasksLock(team), () => {
    const found = rawTasks(team);
    const target = found.find((t) => str(t.raw.id) === id);
    if (!target)
      throw new NotFoundError(`team ${team} has no task ${id}`, {
        hint: `see \`troupe bus swarm tasks --team ${team}\``,
      });
    change(
      target.raw,
      found.map((t) => task(t.raw, t.file)),
    );
    writeJsonAtomic(target.file, target.holder);
    return task(target.raw, target.file);
  });
}
