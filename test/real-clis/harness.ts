import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { bin as troupeBin } from '../support/troupe.js';

/**
 * The real CLIs, installed by `npm run test:real-clis` (or by hand) into a cache folder:
 * `npm install --prefix ~/.cache/troupe/real-clis --no-save --no-audit --no-fund
 * @anthropic-ai/claude-code@2.1.197 @google/gemini-cli@0.61.0 @openai/codex@0.171.0`.
 */
export const CLIS_DIR = process.env.TROUPE_REAL_CLIS_DIR ?? join(homedir(), '.cache', 'troupe', 'real-clis');
export const cliBin = (cli: 'claude' | 'gemini' | 'codex') => join(CLIS_DIR, 'node_modules', '.bin', cli);
export const hasCli = (cli: 'claude' | 'gemini' | 'codex') => existsSync(cliBin(cli));
/** `npm run test:real-clis` sets it: every scenario, not only the quick ones `npm test` runs. */
export const FULL = process.env.TROUPE_REAL_CLIS_FULL === '1';

/** A home of the test's own: no login, no settings of the user's. */
export function scratchHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'troupe-e2e-home-'));
  for (const dir of ['.config', '.codex']) mkdirSync(join(home, dir), { recursive: true });
  return home;
}

export function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(value, null, 2));
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `troupe` with exactly `env` (nothing of the caller's environment but PATH, so no real
 * credential can reach a CLI); as `user` (via `runuser`) when given.
 */
export async function troupeAs(
  cwd: string,
  args: string[],
  env: Record<string, string>,
  user?: string,
): Promise<RunResult> {
  const result = await spawnTroupeAs(cwd, args, env, user);
  return { code: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** The same, not awaited: for a run that is watched while it waits. */
export function spawnTroupeAs(cwd: string, args: string[], env: Record<string, string>, user?: string) {
  const base = { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', ...env };
  const command = user ? 'runuser' : 'node';
  const argv = user
    ? [
        '-u',
        user,
        '--',
        'env',
        ...Object.entries(base).map(([k, v]) => `${k}=${v}`),
        'node',
        troupeBin,
        ...args,
      ]
    : [troupeBin, ...args];
  return execa(command, argv, {
    cwd,
    env: base,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    buffer: true,
  });
}

/** Starts `troupe run` and resolves with its task id once it says it waits on a limit. */
export async function runUntilWaiting(
  cwd: string,
  args: string[],
  env: Record<string, string>,
  user?: string,
) {
  const child = spawnTroupeAs(cwd, args, env, user);
  let stderr = '';
  const id = await new Promise<string>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const id = /troupe (T-[0-9A-F]{6})/.exec(stderr)?.[1];
      if (id && /⏳/.test(stderr)) resolve(id);
    });
    child.then((r) =>
      reject(new Error(`troupe ended (exit ${r.exitCode}) without waiting:\n${r.stdout}\n${stderr}`)),
    );
  });
  return { child, id, stderr: () => stderr };
}

export function parseJson<T>(run: RunResult): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}

/**
 * The user the non-root scenarios run as, when the tests run as root (root changes what the
 * CLIs allow: Claude refuses bypassPermissions, Gemini reads settings files only root owns).
 * Made with `useradd` on first use; null when the tests do not run as root (then every
 * scenario already ran as a non-root user).
 */
export const E2E_USER = 'troupe-e2e';
export function nonRootUser(): string | null {
  if (process.getuid?.() !== 0) return null;
  try {
    execFileSync('id', ['-u', E2E_USER], { stdio: 'ignore' });
  } catch {
    execFileSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', E2E_USER], {
      stdio: 'ignore',
    });
  }
  return E2E_USER;
}

/** Hands the test's folders to `user` (recursively). */
export function giveTo(user: string, ...paths: string[]): void {
  for (const path of paths) execFileSync('chown', ['-R', `${user}:`, path]);
}

let sharedClis: string | null = null;
/**
 * A folder of the CLIs that `user` can run: the cache itself when it can, else (a cache under
 * root's home) a copy of hard links in the temp folder, made once.
 */
export function clisFor(user: string | undefined): (cli: 'claude' | 'gemini' | 'codex') => string {
  if (!user) return cliBin;
  try {
    execFileSync('runuser', ['-u', user, '--', 'test', '-x', cliBin('claude')], { stdio: 'ignore' });
    return cliBin;
  } catch {
    if (!sharedClis) {
      sharedClis = mkdtempSync(join(tmpdir(), 'troupe-real-clis-'));
      chmodSync(sharedClis, 0o755);
      execFileSync('cp', ['-al', join(CLIS_DIR, 'node_modules'), join(sharedClis, 'node_modules')]);
    }
    const dir = sharedClis;
    return (cli) => join(dir, 'node_modules', '.bin', cli);
  }
}

/** `git` in a repository another user owns. */
export async function gitIn(repo: string, ...args: string[]): Promise<string> {
  const result = await execa('git', ['-c', 'safe.directory=*', ...args], { cwd: repo, stdin: 'ignore' });
  return String(result.stdout);
}
