import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, vi } from 'vitest';
import { openProject } from '../../app/project.js';
import type { TaskIssueRef } from '../../core/tracker.js';
import { loadPipeline } from '../../pipeline/load.js';
import { loadScript } from '../../runtimes/script.js';
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

/**
 * For handlers that still print through the process (the foreground run): each test's stdout,
 * in order, in the returned array; stderr silenced. Call once at the top of a test file.
 */
export function captureProcessOutput(): string[] {
  const printed: string[] = [];
  beforeEach(() => {
    printed.length = 0;
    vi.spyOn(process.stdout, 'write').mockImplementation((text) => printed.push(String(text)) > 0);
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });
  afterEach(() => void vi.restoreAllMocks());
  return printed;
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

// ---- part A (cmds-a) ----

/** A pipeline (`.troupe/p.yaml`) of one agent with two chunks that stops at a human gate, and its offline reply (`.troupe/s.yaml`). */
export const GATED_PIPELINE = {
  '.troupe/p.yaml': `agents:
  - id: writer
    runtime: claude
    system_prompt: "{{ input }} {{ chunks }}"
    chunks:
      initial: ["write the parser", "write the tests"]
    gate: {type: human}
`,
  '.troupe/s.yaml': 'agents:\n  writer: ["draft 1"]\n',
};

/** A GitHub issue as `troupe watch` records it on the task it starts. */
export const GITHUB_ISSUE: TaskIssueRef = {
  source: 'github:acme/app',
  id: '12',
  identifier: '#12',
  url: 'https://github.com/acme/app/issues/12',
  state: 'open',
};

/**
 * Starts a task in the scratch project at `root` on one of its pipelines with its offline replies
 * (paths relative to root) and runs it here until it ends or waits; its id.
 */
export async function runScriptedTask(
  root: string,
  files: { pipeline: string; script: string } = { pipeline: '.troupe/p.yaml', script: '.troupe/s.yaml' },
  input = 'write',
  issue?: TaskIssueRef,
): Promise<string> {
  const tasks = openProject(root).tasks;
  const id = tasks.start({
    pipeline: loadPipeline(join(root, files.pipeline)),
    input,
    script: loadScript(join(root, files.script)),
    cwd: root,
    ...(issue ? { issue } : {}),
  });
  await tasks.continue(id);
  return id;
}
