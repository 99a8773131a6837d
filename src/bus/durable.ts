import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  linkSync,
  lstatSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { CollisionError, MessageInvalidError } from './errors.js';
import { replaceTmpName } from './ids.js';

export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function writeAll(fd: number, bytes: Buffer): void {
  let off = 0;
  while (off < bytes.length) {
    const n = writeSync(fd, bytes, off, bytes.length - off);
    if (n <= 0) throw new Error(`short write: ${off} of ${bytes.length} bytes`);
    off += n;
  }
}

/** Creates `dir/name` exclusively (0600), writes every byte and fsyncs it; never replaces a file. */
export function writeExclusive(dir: string, name: string, bytes: Buffer, sync = true): string {
  const path = join(dir, name);
  const fd = openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600);
  try {
    writeAll(fd, bytes);
    if (sync) fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(path, { force: true });
    throw error;
  }
  closeSync(fd);
  return path;
}

/**
 * Gives a fully written file its final name without ever replacing one: hard-link then unlink
 * (Node has no renameat2(RENAME_NOREPLACE)). A name already holding the same bytes counts as
 * delivered (a retry after a crash); different bytes keep both and throw CollisionError.
 * `keepSource` leaves the source in place so the caller can link it once more (the outbox copy).
 */
export function publishNoReplace(
  source: string,
  dest: string,
  bytes: Buffer,
  keepSource = false,
): 'published' | 'identical' {
  try {
    linkSync(source, dest);
  } catch (error) {
    if (errno(error) !== 'EEXIST') {
      if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS'].includes(errno(error) ?? '')) throw error;
      // A file system without hard links: rename after checking the name is free (a small race
      // window, but never a silent replace of mail that was already there before).
      if (exists(dest)) return collideOrIdentical(source, dest, bytes);
      renameSync(source, dest);
      return 'published';
    }
    return collideOrIdentical(source, dest, bytes);
  }
  if (!keepSource) unlinkSync(source);
  return 'published';
}

function collideOrIdentical(source: string, dest: string, bytes: Buffer): 'identical' {
  let existing: Buffer | undefined;
  try {
    existing = readRegularFile(dest, bytes.length);
  } catch {
    existing = undefined;
  }
  if (existing?.equals(bytes)) {
    rmSync(source, { force: true });
    return 'identical';
  }
  throw new CollisionError(dest, source);
}

export function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (error) {
    if (errno(error) === 'ENOENT') return false;
    throw error;
  }
}

/**
 * AMQ's WriteFileAtomic: a hidden temp file in the same directory, fsynced, renamed over the
 * target, directory fsynced. `sync: false` is for advisory files (presence touches) where a lost
 * update after power loss is harmless but a torn file is not.
 */
export function writeFileAtomic(dir: string, name: string, bytes: Buffer, sync = true): void {
  let tmp: string;
  for (let attempt = 0; ; attempt++) {
    try {
      tmp = writeExclusive(dir, replaceTmpName(name), bytes, sync);
      break;
    } catch (error) {
      if (errno(error) !== 'EEXIST' || attempt > 5) throw error;
    }
  }
  try {
    if (sync) fsyncDir(dir);
    renameSync(tmp, join(dir, name));
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
  if (sync) fsyncDir(dir);
}

/**
 * Reads a file that must be a regular file: a symlink is refused without following it, and a
 * FIFO or device is refused without blocking on it. Over `maxBytes` is a parse error.
 */
export function readRegularFile(path: string, maxBytes: number): Buffer {
  return withRegularFile(path, (fd, size) => {
    if (size > maxBytes) {
      throw new MessageInvalidError('parse_error', `message is ${size} bytes, over the 10 MiB limit`);
    }
    return readUpTo(fd, size);
  });
}

/** The first `maxBytes` of a file readRegularFile would read, whatever its size, and that size. */
export function readRegularFileStart(path: string, maxBytes: number): { bytes: Buffer; size: number } {
  return withRegularFile(path, (fd, size) => ({ bytes: readUpTo(fd, Math.min(size, maxBytes)), size }));
}

function withRegularFile<T>(path: string, read: (fd: number, size: number) => T): T {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if (errno(error) === 'ELOOP') throw new MessageInvalidError('parse_error', 'not a regular file: symlink');
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new MessageInvalidError('parse_error', `not a regular file: ${fileKind(stat)}`);
    return read(fd, stat.size);
  } finally {
    closeSync(fd);
  }
}

function readUpTo(fd: number, length: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  let off = 0;
  while (off < length) {
    const n = readSync(fd, buf, off, length - off, off);
    if (n === 0) break;
    off += n;
  }
  return off === length ? buf : buf.subarray(0, off);
}

export function fileKind(stat: {
  isFIFO(): boolean;
  isSymbolicLink(): boolean;
  isDirectory(): boolean;
  isSocket(): boolean;
}): string {
  if (stat.isFIFO()) return 'fifo';
  if (stat.isSymbolicLink()) return 'symlink';
  if (stat.isDirectory()) return 'directory';
  if (stat.isSocket()) return 'socket';
  return 'device';
}
