import path from 'node:path';
import { type Tracker, TrackerError, type TrackerIssue } from '../core/tracker.js';
import {
  type BacklogConfig,
  findBacklog,
  idKey,
  isPlainId,
  listTaskFiles,
  MAX_TASK_FILE_BYTES,
  readBacklogConfig,
  readRegular,
  replaceAtomically,
  rootConfigFile,
  statusKey,
  type TaskFileEntry,
  type TaskFolder,
} from './backlog-folder.js';
import {
  editFrontMatter,
  type FieldEdit,
  readTaskFile,
  type TaskFile,
  withLink,
  withProgress,
} from './backlog-task-file.js';

export { findBacklog } from './backlog-folder.js';

/**
 * The tracker of a project's backlog, found as Backlog.md finds it (`findBacklog`), with its
 * settings where Backlog.md reads them (a root `backlog.config.yml`, else the folder's
 * `config.yml`); null when the project has no backlog.
 */
export function openBacklog(projectRoot: string, options: BacklogTrackerOptions = {}): BacklogTracker | null {
  const dir = findBacklog(projectRoot);
  if (!dir) return null;
  return new BacklogTracker(dir, { configFile: rootConfigFile(projectRoot) ?? undefined, ...options });
}

/**
 * A Backlog.md folder as a tracker (docs/trackers.md, "Local backlog"): the tasks of
 * `backlog/tasks/` are the issues, their front matter `status` the state. Nothing but the task
 * files is read or written, so it works offline with no account, and side by side with
 * Backlog.md's own CLI and board.
 */

export interface BacklogTrackerOptions {
  /** Statuses troupe takes work from. Default: every status but the last. */
  active?: readonly string[];
  /** Statuses where work is over. Default: the last status (Backlog.md's terminal one). */
  terminal?: readonly string[];
  /** Where a task goes once its pull request is open. Default: the last status. */
  handOff?: string;
  /**
   * Where `claim` moves a task that is still in the first status, as Backlog.md's own workflow
   * has a person do (`-s "In Progress" -a @me`); `release` moves it back when nobody is left
   * on it. Default: `In Progress` when the backlog has it, else the second active status; null: never.
   */
  working?: string | null;
  /** Every one of these labels is required (compared lower-cased). */
  labels?: readonly string[];
  /** Also offer tasks someone is assigned to. Default false: an assigned task is that person's. */
  includeAssigned?: boolean;
  /** Told of each task file skipped as unreadable, on every read. */
  onProblem?: (problem: TrackerError) => void;
  /** The settings file with `statuses`, when not the folder's `config.yml` (see `openBacklog`). */
  configFile?: string;
  /** The clock for `updated_date` (tests). */
  now?: () => Date;
}

/** The statuses as this backlog names them, resolved from config.yml and the options. */
export interface BacklogStatuses {
  all: string[];
  active: string[];
  terminal: string[];
  handOff: string;
  working: string | null;
  /** Where a task with no `status` is (config.yml `default_status`). */
  default: string;
}

/** The id `upsertComment` returns: a task has one progress note, troupe's. */
export const PROGRESS_NOTE_ID = 'troupe-progress';

/** Backlog.md's priorities on Symphony's scale (1 urgent … 4 low). */
const PRIORITY: Record<string, number> = { high: 2, medium: 3, low: 4 };

const MAX_NOTE_BYTES = 64 * 1024;

interface LoadedTask {
  entry: TaskFileEntry;
  file: TaskFile;
  id: string;
}

interface Scan {
  /** By idKey; tasks/ wins over completed/. */
  tasks: Map<string, LoadedTask>;
  /** Ids two files of one folder claim: neither is offered nor written. */
  ambiguous: Set<string>;
}

export class BacklogTracker implements Tracker {
  readonly source: string;
  readonly #dir: string;
  readonly #shownAs: string;
  readonly #options: BacklogTrackerOptions;
  #problems: TrackerError[] = [];
  /** The last edit of each task (by idKey), the next one's turn: see `#edit`. */
  readonly #editing = new Map<string, Promise<void>>();

  /** `dir`: the backlog folder itself (see `findBacklog`). */
  constructor(dir: string, options: BacklogTrackerOptions = {}) {
    this.#dir = path.resolve(dir);
    this.#shownAs = path.basename(this.#dir);
    this.#options = options;
    this.source = `backlog:${this.#dir}`;
  }

  /** The task files the last read skipped, each as `file:line: what is wrong`. */
  get problems(): readonly TrackerError[] {
    return this.#problems;
  }

  async statuses(): Promise<BacklogStatuses> {
    return this.#resolve(await readBacklogConfig(this.#dir, this.#shownAs, this.#options.configFile));
  }

  async candidates(): Promise<TrackerIssue[]> {
    const statuses = await this.statuses();
    const scan = await this.#scan(['tasks', 'completed']);
    const active = new Set(statuses.active.map(statusKey));
    const terminal = new Set(statuses.terminal.map(statusKey));
    const required = (this.#options.labels ?? []).map((l) => l.toLowerCase());
    const issues: TrackerIssue[] = [];
    for (const [key, task] of scan.tasks) {
      if (task.entry.folder !== 'tasks' || scan.ambiguous.has(key)) continue;
      const state = statusKey(this.#status(task, statuses));
      if (!active.has(state) || terminal.has(state)) continue;
      if (!this.#options.includeAssigned && task.file.fields.assignee.length > 0) continue;
      const labels = task.file.fields.labels.map((l) => l.toLowerCase());
      if (!required.every((l) => labels.includes(l))) continue;
      issues.push(this.#issue(task, scan, statuses));
    }
    return issues;
  }

  /** A task in `completed/` keeps its status; one archived, or gone, is null. */
  async states(ids: readonly string[]): Promise<Map<string, string | null>> {
    const statuses = await this.statuses();
    const scan = await this.#scan(['tasks', 'completed']);
    const result = new Map<string, string | null>();
    for (const id of ids) {
      const key = idKey(id);
      const task = isPlainId(id) && !scan.ambiguous.has(key) ? scan.tasks.get(key) : undefined;
      result.set(id, task ? this.#status(task, statuses) : null);
    }
    return result;
  }

  async claim(id: string, by: string): Promise<void> {
    const who = checkName(by);
    const statuses = await this.statuses();
    await this.#edit(id, (text, file, where) => {
      const edits: FieldEdit[] = [];
      if (!file.fields.assignee.some((name) => sameName(name, who))) {
        edits.push({ key: 'assignee', value: [...file.fields.assignee, who] });
      }
      const status = file.fields.status ?? statuses.default;
      const first = statuses.active[0];
      if (statuses.working && first && statusKey(status) === statusKey(first)) {
        edits.push({ key: 'status', value: statuses.working });
      }
      return this.#withFields(text, file, edits, where);
    });
  }

  async release(id: string, by: string): Promise<void> {
    const who = checkName(by);
    const statuses = await this.statuses();
    await this.#edit(id, (text, file, where) => {
      const assignee = file.fields.assignee.filter((name) => !sameName(name, who));
      if (assignee.length === file.fields.assignee.length) return text;
      const edits: FieldEdit[] = [{ key: 'assignee', value: assignee }];
      const status = file.fields.status ?? statuses.default;
      const first = statuses.active[0];
      if (
        assignee.length === 0 &&
        statuses.working &&
        first &&
        statusKey(status) === statusKey(statuses.working)
      ) {
        edits.push({ key: 'status', value: first });
      }
      return this.#withFields(text, file, edits, where);
    });
  }

  async upsertComment(id: string, body: string, commentId: string | null): Promise<string> {
    if (commentId !== null && commentId !== PROGRESS_NOTE_ID) {
      throw new TrackerError(
        'not_found',
        `${id}: no note ${JSON.stringify(commentId)}; a backlog task has one, troupe's progress note`,
      );
    }
    if (Buffer.byteLength(body, 'utf8') > MAX_NOTE_BYTES) {
      throw new TrackerError('invalid', `the progress note for ${id} is over 64 KiB`);
    }
    await this.#edit(id, (text) => withProgress(text, body));
    return PROGRESS_NOTE_ID;
  }

  async linkPullRequest(id: string, url: string): Promise<void> {
    checkUrl(url);
    await this.#edit(id, (text) => withLink(text, url));
  }

  async moveTo(id: string, state: string): Promise<void> {
    const statuses = await this.statuses();
    const status = canonical(statuses.all, state, 'the state to move to');
    await this.#edit(id, (text, file, where) => {
      if (file.fields.status !== null && statusKey(file.fields.status) === statusKey(status)) return text;
      return this.#withFields(text, file, [{ key: 'status', value: status }], where);
    });
  }

  #resolve(config: BacklogConfig): BacklogStatuses {
    const all = config.statuses;
    const o = this.#options;
    const last = all[all.length - 1]!;
    const terminal = o.terminal ? o.terminal.map((s) => canonical(all, s, 'terminal')) : [last];
    const ended = new Set(terminal.map(statusKey));
    const active = o.active
      ? o.active.map((s) => canonical(all, s, 'active'))
      : all.filter((s) => !ended.has(statusKey(s)));
    const inProgress = all.find((s) => statusKey(s) === 'inprogress') ?? active[1] ?? null;
    return {
      all,
      active,
      terminal,
      handOff: o.handOff ? canonical(all, o.handOff, 'hand-off') : last,
      working: o.working === null ? null : o.working ? canonical(all, o.working, 'working') : inProgress,
      default: all.find((s) => statusKey(s) === statusKey(config.defaultStatus)) ?? all[0]!,
    };
  }

  #status(task: LoadedTask, statuses: BacklogStatuses): string {
    return task.file.fields.status ?? statuses.default;
  }

  #issue(task: LoadedTask, scan: Scan, statuses: BacklogStatuses): TrackerIssue {
    const { fields } = task.file;
    return {
      id: task.id,
      identifier: task.id,
      title: fields.title ?? titleFromName(task.entry.name),
      description: task.file.description,
      priority: (fields.priority && PRIORITY[fields.priority]) || null,
      state: this.#status(task, statuses),
      labels: fields.labels.map((l) => l.toLowerCase()),
      blocked_by: fields.dependencies.map((dependency) => {
        const found = scan.ambiguous.has(idKey(dependency)) ? undefined : scan.tasks.get(idKey(dependency));
        const id = found?.id ?? dependency;
        return { id, identifier: id, state: found ? this.#status(found, statuses) : null };
      }),
      url: null,
      created_at: isoTime(fields.createdDate),
      updated_at: isoTime(fields.updatedDate),
    };
  }

  async #scan(folders: TaskFolder[]): Promise<Scan> {
    const tasks = new Map<string, LoadedTask>();
    const ambiguous = new Set<string>();
    const problems: TrackerError[] = [];
    for (const folder of folders) {
      const listed = await listTaskFiles(this.#dir, folder, this.#shownAs);
      problems.push(...listed.problems);
      const inFolder = new Map<string, string>();
      for (const entry of listed.entries) {
        const loaded = await this.#load(entry).catch((error: unknown) => {
          if (error instanceof TrackerError) problems.push(error);
          else throw error;
          return null;
        });
        if (!loaded) continue;
        const key = idKey(loaded.id);
        const other = inFolder.get(key);
        if (other !== undefined) {
          ambiguous.add(key);
          problems.push(
            new TrackerError(
              'invalid',
              `${this.#where(entry)}:2: id ${loaded.id} is also the id of ${other}; neither is used`,
            ),
          );
          continue;
        }
        inFolder.set(key, entry.name);
        if (!tasks.has(key)) tasks.set(key, loaded);
      }
    }
    this.#problems = problems;
    for (const problem of problems) this.#options.onProblem?.(problem);
    return { tasks, ambiguous };
  }

  async #load(entry: TaskFileEntry): Promise<LoadedTask> {
    const where = this.#where(entry);
    const file = readTaskFile(await readRegular(entry.path, MAX_TASK_FILE_BYTES, where), where);
    return { entry, file, id: file.fields.id ?? entry.fileId };
  }

  #where(entry: TaskFileEntry): string {
    return `${this.#shownAs}/${entry.folder}/${entry.name}`;
  }

  /** The one file of `tasks/` that is task `id`: by its name first, else by the id inside. */
  async #find(id: string): Promise<TaskFileEntry> {
    if (!isPlainId(id)) {
      throw new TrackerError('invalid', `${JSON.stringify(id.slice(0, 80))} is not a backlog task id`, {
        hint: 'ids look like task-12 or BACK-355.01',
      });
    }
    const key = idKey(id);
    const { entries } = await listTaskFiles(this.#dir, 'tasks', this.#shownAs);
    const named = entries.filter((e) => idKey(e.fileId) === key);
    if (named.length === 1) return named[0]!;
    const scan = await this.#scan(['tasks']);
    if (scan.ambiguous.has(key))
      throw new TrackerError('invalid', `${id}: more than one task file has this id`);
    const found = scan.tasks.get(key);
    if (!found) throw new TrackerError('not_found', `${id}: no such task in ${this.#shownAs}/tasks`);
    return found.entry;
  }

  /**
   * Edits of one task in this process take turns: two at once would both pass the check below
   * before either file is replaced, and one edit would be lost.
   */
  async #edit(id: string, change: (text: string, file: TaskFile, where: string) => string): Promise<void> {
    const key = idKey(id);
    const next = (this.#editing.get(key) ?? Promise.resolve())
      .catch(() => {})
      .then(() => this.#editOnce(id, change));
    this.#editing.set(key, next);
    try {
      await next;
    } finally {
      if (this.#editing.get(key) === next) this.#editing.delete(key);
    }
  }

  /**
   * Reads task `id`, applies `change` and replaces the file atomically, unless someone changed
   * it meanwhile: then it starts again from their version, so their edit is never lost.
   */
  async #editOnce(
    id: string,
    change: (text: string, file: TaskFile, where: string) => string,
  ): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const entry = await this.#find(id);
      const where = this.#where(entry);
      const text = await readRegular(entry.path, MAX_TASK_FILE_BYTES, where);
      const next = change(text, readTaskFile(text, where), where);
      if (next === text) return;
      const now = await readRegular(entry.path, MAX_TASK_FILE_BYTES, where).catch(() => null);
      if (now !== text) continue;
      await replaceAtomically(entry.path, next);
      return;
    }
    throw new TrackerError('unreachable', `${id}: its file kept changing while troupe wrote it`, {
      hint: 'try again',
    });
  }

  /** The front matter edits plus `updated_date`, in the file's own date style. */
  #withFields(text: string, file: TaskFile, edits: FieldEdit[], where: string): string {
    if (edits.length === 0) return text;
    const now = (this.#options.now ?? (() => new Date()))();
    const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(file.fields.updatedDate ?? file.fields.createdDate ?? '');
    const stamp = now
      .toISOString()
      .slice(0, dateOnly ? 10 : 16)
      .replace('T', ' ');
    return editFrontMatter(text, [...edits, { key: 'updated_date', value: stamp }], where);
  }
}

function canonical(all: readonly string[], status: string, what: string): string {
  const found = all.find((s) => statusKey(s) === statusKey(status));
  if (found) return found;
  throw new TrackerError(
    'invalid',
    `${what}: "${status}" is not a status of this backlog (${all.join(', ')})`,
    {
      hint: 'statuses come from backlog/config.yml `statuses`',
    },
  );
}

/** Backlog.md writes assignees as `@name` or `name`; both name the same person. */
function sameName(a: string, b: string): boolean {
  const plain = (s: string) => s.trim().replace(/^@/, '').toLowerCase();
  return plain(a) === plain(b);
}

function checkName(by: string): string {
  const name = by.trim();
  if (name === '' || name.length > 100 || /[\u0000-\u001f\u007f]/.test(name)) {
    throw new TrackerError('invalid', `${JSON.stringify(by.slice(0, 100))} cannot be an assignee`);
  }
  return name;
}

function checkUrl(url: string): void {
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // said below
  }
  if (!parsed || !/^https?:$/.test(parsed.protocol) || /\s/.test(url) || url.length > 2048) {
    throw new TrackerError(
      'invalid',
      `${JSON.stringify(url.slice(0, 100))} is not a pull request URL (http or https)`,
    );
  }
}

/** `task-12 - Fix-the-login.md` → `Fix the login`, for a file whose front matter has no title. */
function titleFromName(name: string): string {
  return name
    .replace(/\.md$/, '')
    .replace(/^[^ ]+\s*-\s*/, '')
    .replace(/-/g, ' ');
}

/** Backlog.md's `2026-01-01 23:37` (UTC) or `2026-01-01` as an ISO time; null when it is neither. */
function isoTime(value: string | null): string | null {
  const m = value ? /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(value.trim()) : null;
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0'] = m;
  const time = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)));
  return Number.isNaN(time.getTime()) ? null : time.toISOString();
}
