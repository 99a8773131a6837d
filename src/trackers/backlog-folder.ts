import { randomBytes } from 'node:crypto';
import { constants, lstatSync, readFileSync, statSync } from 'node:fs';
import { type FileHandle, lstat, open, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { containedPath } from '../core/contained-path.js';
import { sizeText } from '../core/input-limit.js';
import { TrackerError } from '../core/tracker.js';
import { DiagnosticSink } from '../pipeline/diagnostics.js';
import { YamlSource } from '../pipeline/yaml-source.js';

/**
 * A Backlog.md folder on disk (docs/trackers.md, "Local backlog"): where it is, its statuses, its
 * task files listed and read without following links, and a file replaced atomically.
 */

/**
 * The folders of Backlog.md's layout (its `DEFAULT_DIRECTORIES`) troupe reads: `tasks/`, and
 * `completed/` for the state of finished tasks. `drafts/` and `archive/` are not work.
 */
export type TaskFolder = 'tasks' | 'completed';

/** Backlog.md's default statuses (`DEFAULT_STATUSES`), used when config.yml names none. */
export const DEFAULT_STATUSES = ['To Do', 'In Progress', 'Done'] as const;

/** A task file is a few KiB; past this it is refused rather than read. */
export const MAX_TASK_FILE_BYTES = 1024 * 1024;
const MAX_CONFIG_BYTES = 256 * 1024;

/**
 * The backlog folder of a project, as Backlog.md's CLI finds it: the `backlog_directory` of a
 * `backlog.config.yml` at the root when it names one inside the project, else `backlog/`, else
 * `.backlog/`; each only when it holds a `tasks/` folder. Null when there is none.
 */
export function findBacklog(projectRoot: string): string | null {
  const configured = configuredDirectory(projectRoot);
  for (const name of configured ? [configured] : ['backlog', '.backlog']) {
    const dir = path.join(projectRoot, name);
    try {
      if (statSync(dir).isDirectory() && statSync(path.join(dir, 'tasks')).isDirectory()) return dir;
    } catch {
      // not this one
    }
  }
  return null;
}

/** `backlog_directory:` of `backlog.config.yml`, read line by line as Backlog.md reads it. */
function configuredDirectory(projectRoot: string): string | null {
  const file = rootConfigFile(projectRoot);
  let text: string;
  try {
    if (!file || lstatSync(file).size > MAX_CONFIG_BYTES) return null;
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const line = /^[ \t]*(?:backlog_directory|backlogDirectory)[ \t]*:(.*)$/m.exec(text);
  const value = line?.[1]?.trim().replace(/^['"]|['"]$/g, '');
  if (!value) return null;
  return containedPath(projectRoot, value).kind === 'outside' || path.isAbsolute(value) ? null : value;
}

export interface BacklogConfig {
  statuses: string[];
  defaultStatus: string;
}

/** Where Backlog.md keeps the settings of a project whose root has one: `backlog.config.yml`. */
export function rootConfigFile(projectRoot: string): string | null {
  const file = path.join(projectRoot, 'backlog.config.yml');
  try {
    return lstatSync(file).isFile() ? file : null;
  } catch {
    return null;
  }
}

/**
 * `statuses` and `default_status` of the backlog's settings: `configFile` when given (a root
 * `backlog.config.yml`), else its `config.yml` (or `config.yaml`); Backlog.md's defaults without one.
 */
export async function readBacklogConfig(
  dir: string,
  shownAs: string,
  configFile?: string,
): Promise<BacklogConfig> {
  const files = configFile
    ? [{ file: configFile, where: path.basename(configFile) }]
    : ['config.yml', 'config.yaml'].map((name) => ({
        file: path.join(dir, name),
        where: `${shownAs}/${name}`,
      }));
  for (const { file, where } of files) {
    let text: string;
    try {
      text = await readRegular(file, MAX_CONFIG_BYTES, where);
    } catch (error) {
      if (error instanceof TrackerError && error.kind === 'not_found') continue;
      throw error;
    }
    const sink = new DiagnosticSink();
    const source = YamlSource.parse(where, text, sink);
    const first = sink.errors()[0];
    if (!source || first)
      throw new TrackerError(
        'invalid',
        `${where}:${first?.line ?? 1}: ${first?.message ?? 'cannot be read'}`,
      );
    const config = (source.value() ?? {}) as Record<string, unknown>;
    const statuses = config.statuses ?? [...DEFAULT_STATUSES];
    if (
      !Array.isArray(statuses) ||
      statuses.length === 0 ||
      !statuses.every((s) => typeof s === 'string' && s.trim() !== '' && !/[\r\n]/.test(s))
    ) {
      throw new TrackerError(
        'invalid',
        `${where}:${source.position(['statuses']).line}: \`statuses\` must be a list of status names`,
      );
    }
    const fallback = typeof config.default_status === 'string' ? config.default_status : statuses[0];
    return { statuses, defaultStatus: fallback };
  }
  return { statuses: [...DEFAULT_STATUSES], defaultStatus: DEFAULT_STATUSES[0] };
}

/** Backlog.md compares statuses trimmed, lower-cased and without spaces. */
export function statusKey(status: string): string {
  return status.trim().toLowerCase().replace(/\s+/g, '');
}

/** `task-12`, `BACK-355.01`: a prefix, a dash and dotted numbers, at the start of a file name. */
const FILE_ID = /^([A-Za-z][A-Za-z0-9_]*-\d+(?:\.\d+)*)(?=\s*-|\.md$)/;

/** What ids are compared by: case aside, and numbers as numbers (`task-01` is `task-1`), as Backlog.md does. */
export function idKey(id: string): string {
  const match = /^(?:([A-Za-z][A-Za-z0-9_]*)-)?(\d+(?:\.\d+)*)$/.exec(id.trim());
  if (!match) return id.trim().toLowerCase();
  const numbers = (match[2] ?? '').split('.').map((n) => String(Number.parseInt(n, 10)));
  return `${(match[1] ?? '').toLowerCase()}-${numbers.join('.')}`;
}

/** An id as a caller may give one: nothing that could name a path. */
export function isPlainId(id: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/.test(id) && !id.includes('..');
}

export interface TaskFileEntry {
  folder: TaskFolder;
  name: string;
  /** The id the file name gives. */
  fileId: string;
  path: string;
}

/**
 * The task files of one folder, by name. A symlink, or a folder whose real path leaves the
 * backlog, is a problem and is skipped: troupe reads and writes only files that are the backlog's.
 */
export async function listTaskFiles(
  dir: string,
  folder: TaskFolder,
  shownAs: string,
): Promise<{ entries: TaskFileEntry[]; problems: TrackerError[] }> {
  const where = containedPath(dir, folder);
  if (where.kind === 'missing') return { entries: [], problems: [] };
  if (where.kind === 'outside') {
    return {
      entries: [],
      problems: [
        new TrackerError('invalid', `${shownAs}/${folder}:1: leads out of the backlog folder; skipped`),
      ],
    };
  }
  const entries: TaskFileEntry[] = [];
  const problems: TrackerError[] = [];
  for (const dirent of await readdir(where.path, { withFileTypes: true })) {
    const fileId = FILE_ID.exec(dirent.name)?.[1];
    if (!fileId || !dirent.name.endsWith('.md')) continue;
    if (!dirent.isFile()) {
      if (dirent.isSymbolicLink()) {
        problems.push(
          new TrackerError(
            'invalid',
            `${shownAs}/${folder}/${dirent.name}:1: a symlink; skipped (troupe never follows links out of the backlog)`,
          ),
        );
      }
      continue;
    }
    entries.push({ folder, name: dirent.name, fileId, path: path.join(where.path, dirent.name) });
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { entries, problems };
}

/**
 * A regular file's text: a symlink is refused without following it (O_NOFOLLOW), a FIFO or
 * device without blocking on it, a file over `maxBytes` without reading it.
 */
export async function readRegular(file: string, maxBytes: number, where: string): Promise<string> {
  let handle: FileHandle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new TrackerError('not_found', `${where}: no such file`);
    if (code === 'ELOOP')
      throw new TrackerError('invalid', `${where}:1: a symlink; troupe does not follow it`);
    throw new TrackerError('unreachable', `${where}: ${(error as Error).message}`, { cause: error });
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new TrackerError('invalid', `${where}:1: not a regular file`);
    if (stat.size > maxBytes) {
      throw new TrackerError(
        'invalid',
        `${where}:1: ${stat.size} bytes, over the ${sizeText(maxBytes)} a task file may hold`,
      );
    }
    const bytes = await handle.readFile();
    if (bytes.length > maxBytes)
      throw new TrackerError('invalid', `${where}:1: grew over ${sizeText(maxBytes)} while read`);
    return bytes.toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * Replaces `file` with `text` atomically: a temporary file created exclusively beside it (never
 * through a link), flushed, then renamed over the old name, which rename replaces without
 * following. Keeps the file's permission bits.
 */
export async function replaceAtomically(file: string, text: string): Promise<void> {
  const stat = await lstat(file);
  if (!stat.isFile()) throw new TrackerError('invalid', `${file}: not a regular file`);
  const tmp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.troupe-${randomBytes(6).toString('hex')}.tmp`,
  );
  const handle = await open(
    tmp,
    constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY,
    stat.mode & 0o777,
  );
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(tmp, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await rename(tmp, file);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}
