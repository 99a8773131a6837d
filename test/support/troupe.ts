import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { execa, type ResultPromise } from 'execa';

/** Drives the real, built CLI binary, as a user would. */

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const bin = join(repoRoot, 'bin', 'troupe.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function troupe(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
  input?: string,
): Promise<CliResult> {
  const result = await execa('node', [bin, ...args], {
    cwd,
    reject: false,
    env: { NO_COLOR: '1', ...env },
    ...(input === undefined ? { stdin: 'ignore' as const } : { input }),
  });
  return { code: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

export async function troupeJson<T = TaskJson>(
  cwd: string,
  args: string[],
): Promise<{ code: number; json: T; stderr: string }> {
  const result = await troupe(cwd, [...args, '--json']);
  try {
    return { code: result.code, json: JSON.parse(result.stdout) as T, stderr: result.stderr };
  } catch {
    throw new Error(`not JSON (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  }
}

/** Starts the CLI without waiting for it (for kill and cancel tests). */
export function spawnTroupe(cwd: string, args: string[]): ResultPromise {
  return execa('node', [bin, ...args], {
    cwd,
    reject: false,
    env: { NO_COLOR: '1' },
    stdin: 'ignore',
    buffer: true,
  });
}

export interface TaskJson {
  id: string;
  status: string;
  pipeline: string;
  input: string;
  stages: Array<{
    n: number;
    agent: string;
    status: string;
    input: string;
    output: string;
    gate: {
      decision: string;
      reason: string;
      by?: string;
      from?: { channel: string; who: string } | null;
    } | null;
    usage: { input_tokens: number; output_tokens: number };
  }>;
  usage: { input_tokens: number; output_tokens: number };
  error: string | null;
  waiting: { kind: string; agent: string; questions: string[] } | null;
}

/** A fresh project directory with the given files (paths relative to it). */
/** Two claude agents, writer then editor: the pipeline the server tests run (under a script). */
export const writerEditorPipeline = `agents:
  - id: writer
    runtime: claude
    system_prompt: "Write: {{ input }}"
    handoffs: [{ to: editor }]
  - id: editor
    runtime: claude
    system_prompt: "Edit: {{ input }}"
`;

export function project(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-test-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

/** The raw event log of a project, straight from its SQLite file. */
export function eventLog(
  dir: string,
  taskId: string,
): Array<{ seq: number; type: string; at: string; data: Record<string, unknown> }> {
  const db = new Database(join(dir, '.troupe', 'troupe.db'), { readonly: true });
  try {
    return db
      .prepare<[string], { seq: number; type: string; at: string; data: string }>(
        'SELECT seq, type, at, data FROM events WHERE task_id = ? ORDER BY seq',
      )
      .all(taskId)
      .map((row) => ({
        seq: row.seq,
        type: row.type,
        at: row.at,
        data: JSON.parse(row.data) as Record<string, unknown>,
      }));
  } finally {
    db.close();
  }
}

export function example(name: string, file = 'agents.yaml'): string {
  return join(repoRoot, 'examples', name, file);
}

/** Waits until `check` returns a value, polling; fails after `ms`, saying what `explain` sees then. */
export async function waitFor<T>(
  check: () => T | undefined | Promise<T | undefined>,
  ms = 10_000,
  explain?: () => string | Promise<string>,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting${explain ? `: ${await explain()}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
