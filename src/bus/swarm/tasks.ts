import { existsSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { z } from 'zod';
import { messageOf, NotFoundError, StateError, TooLargeError } from '../../core/errors.js';
import { printable } from '../../core/printable.js';
import { claudeDir, readJson, tasksDir, withLock, writeJsonAtomic } from './files.js';
import { reasonOf, TaskSchema, type Warn } from './schema.js';

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

function task(t: z.output<typeof TaskSchema>, file: string): TeamTask {
  return {
    id: t.id,
    subject: t.subject || t.title || '',
    status: t.status || 'pending',
    owner: t.owner || t.assigned_to || '',
    blockedBy: t.blockedBy ?? t.depends_on ?? [],
    file,
  };
}

/** A task as found: `raw` is its object as read (changed in place), `holder` what its file holds. */
interface Found {
  task: TeamTask;
  raw: Raw;
  holder: Raw;
}

/** A file or entry passed over, and why; `id` when it names one. */
interface Refused {
  file: string;
  id?: string;
  reason: string;
  tooDeep?: boolean;
}

/**
 * Every task of the team's files: a task per file, or the `{tasks: [...]}` of a list file. What
 * is not a task is refused (Claude Code's own readers skip it too), and so is a second task under
 * an id already taken: the one in `<id>.json` is kept, else the first in file order.
 */
function scanTasks(team: string): { found: Found[]; refused: Refused[] } {
  const dir = tasksDir(team);
  const found = new Map<string, Found>();
  const refused: Refused[] = [];
  if (!existsSync(dir)) return { found: [], refused };
  const take = (file: string, entry: unknown, holder: Raw, where: string) => {
    const parsed = TaskSchema.safeParse(entry);
    if (!parsed.success) {
      const id = (entry as Raw | null)?.id;
      refused.push({
        file,
        ...(typeof id === 'string' ? { id } : {}),
        reason: `${where}${reasonOf(parsed.error)}`,
      });
      return;
    }
    const next = { task: task(parsed.data, file), raw: entry as Raw, holder };
    const id = next.task.id;
    const kept = found.get(id);
    if (kept && (basename(kept.task.file) === `${id}.json` || basename(file) !== `${id}.json`)) {
      refused.push({ file, reason: `${where}task ${id} is already ${kept.task.file}` });
      return;
    }
    if (kept) refused.push({ file: kept.task.file, reason: `task ${id} is already ${file}` });
    found.set(id, next);
  };
  for (const name of readdirSync(dir).sort(byNumber)) {
    if (name.startsWith('.') || !name.endsWith('.json')) continue;
    const file = join(dir, name);
    let content: unknown;
    try {
      content = readJson(file);
    } catch (error) {
      refused.push({ file, reason: messageOf(error), tooDeep: error instanceof TooLargeError });
      continue;
    }
    const holder = content as Raw;
    if (content !== null && typeof content === 'object' && Array.isArray(holder.tasks)) {
      for (const [i, entry] of (holder.tasks as unknown[]).entries())
        take(file, entry, holder, `tasks[${i}]: `);
    } else take(file, content, holder, '');
  }
  return { found: [...found.values()], refused };
}

function byNumber(a: string, b: string): number {
  return Number.parseInt(a, 10) - Number.parseInt(b, 10) || a.localeCompare(b);
}

/** The team's tasks; each file or entry passed over is told to `warn` once. */
export function listTasks(team: string, warn: Warn = () => {}): TeamTask[] {
  const { found, refused } = scanTasks(team);
  for (const r of refused) warn(refusalText(r));
  return found.map((f) => f.task);
}

/** Why a file was passed over; a parser's message may quote the file, so it is made printable. */
function refusalText(r: Refused): string {
  const reason = printable(r.reason);
  return reason.startsWith(r.file) ? `skipped ${reason}` : `skipped ${r.file}: ${reason}`;
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
  return updateTask(team, id, (t, raw, all) => {
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
  return updateTask(team, id, (t, raw) => {
    if (t.status !== 'in_progress')
      throw new StateError(`task ${id} of team ${team} is ${t.status}, not in_progress`);
    if (t.owner.toLowerCase() !== handle)
      throw new StateError(`task ${id} of team ${team} is claimed by ${t.owner}, not ${handle}`);
    raw.status = 'completed';
  });
}

function updateTask(
  team: string,
  id: string,
  change: (t: TeamTask, raw: Raw, all: TeamTask[]) => void,
): TeamTask {
  return withLock(tasksLock(team), () => {
    const { found, refused } = scanTasks(team);
    const target = found.find((f) => f.task.id === id);
    if (!target) throw missing(team, id, refused);
    change(
      target.task,
      target.raw,
      found.map((f) => f.task),
    );
    writeJsonAtomic(target.task.file, target.holder);
    return task(TaskSchema.parse(target.raw), target.task.file);
  });
}

/** No task `id`: a file of that name (or entry of that id) that was refused says why. */
function missing(team: string, id: string, refused: Refused[]): Error {
  const hint = { hint: `see \`troupe bus swarm tasks --team ${team}\`` };
  const why = refused.find((r) => r.id === id || basename(r.file) === `${id}.json`);
  if (!why) return new NotFoundError(`team ${team} has no task ${id}`, hint);
  const message = `task ${id} of team ${team} cannot be used: ${refusalText(why).replace(/^skipped /, '')}`;
  return why.tooDeep ? new TooLargeError(message, hint) : new NotFoundError(message, hint);
}
