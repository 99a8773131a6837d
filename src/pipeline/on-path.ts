import { statSync } from 'node:fs';
import path from 'node:path';

/** Whether `bin` is an executable file in one of the directories of `searchPath` (a PATH value). */
export function isOnPath(bin: string, searchPath: string = process.env.PATH ?? ''): boolean {
  const extensions =
    process.platform === 'win32' ? (process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  return searchPath
    .split(path.delimiter)
    .filter(Boolean)
    .some((dir) => extensions.some((ext) => isExecutableFile(path.join(dir, bin + ext))));
}

/** Whether `file` is a file this user may run. */
export function isExecutableFile(file: string): boolean {
  const stat = statSync(file, { throwIfNoEntry: false });
  // on win32 the mode bits say nothing; the extension is what makes a file runnable
  return stat?.isFile() === true && (process.platform === 'win32' || (stat.mode & 0o111) !== 0);
}
