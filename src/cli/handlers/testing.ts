import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { CommandIo } from '../command-io.js';

/** Test support for command handlers: a scratch project on disk and an io that keeps what was printed. */

export interface CapturedIo extends CommandIo {
  stdout(): string;
  stderr(): string;
}

export function capturedIo(cwd: string): CapturedIo {
  const out: string[] = [];
  const err: string[] = [];
  return {
    cwd,
    out: (text) => void out.push(text),
    err: (text) => void err.push(text),
    stdout: () => out.join(''),
    stderr: () => err.join(''),
  };
}

/** A temp folder holding `files` (path → content); `.troupe/` makes it a project. */
export function scratchProject(files: Record<string, string> = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'troupe-handler-'));
  mkdirSync(join(root, '.troupe'), { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}
