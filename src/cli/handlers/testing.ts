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

// ---- part B (cmds-b) ----

import { execa } from 'execa';

/** Two agents in a row on the scripted runtime and their replies: a pipeline `troupe test` runs offline. */
export const SCRIPTED_PAIR = {
  '.troupe/pipelines/pair.yaml':
    'agents:\n  - id: writer\n    runtime: scripted\n    handoffs: [{ to: editor }]\n  - id: editor\n    runtime: scripted\n',
  '.troupe/scripts/pair.yaml': 'agents:\n  writer: ["drafted"]\n  editor: ["edited"]\n',
};

/** `scratchProject(files)` made a git repository: a local identity and one commit on `main`. */
export async function scratchRepo(files: Record<string, string> = {}): Promise<string> {
  const root = scratchProject({ 'README.md': 'hello\n', ...files });
  const git = (...args: string[]) => execa('git', args, { cwd: root, stdin: 'ignore' });
  await git('init', '--quiet', '--initial-branch=main');
  await git('config', 'user.name', 'Test User');
  await git('config', 'user.email', 'test@example.com');
  await git('config', 'commit.gpgsign', 'false');
  await git('add', '--all');
  await git('commit', '--quiet', '-m', 'initial');
  return root;
}
