import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';

/** Real temporary git repositories for the workspace tests. */

export async function sh(cwd: string, ...args: string[]): Promise<string> {
  const result = await execa('git', args, { cwd, stdin: 'ignore' });
  return String(result.stdout);
}

/** `git init` in a temp dir with a local identity and one commit on `main`. */
export async function tmpRepo(files: Record<string, string> = { 'README.md': 'hello\n' }): Promise<string> {
  // a parent of its own, so a test can check that nothing was written beside the repo while
  // other processes come and go in the shared temp dir
  const dir = join(mkdtempSync(join(tmpdir(), 'troupe-git-')), 'repo');
  mkdirSync(dir);
  await sh(dir, 'init', '--quiet', '--initial-branch=main');
  await sh(dir, 'config', 'user.name', 'Test User');
  await sh(dir, 'config', 'user.email', 'test@example.com');
  await sh(dir, 'config', 'commit.gpgsign', 'false');
  writeFiles(dir, files);
  await sh(dir, 'add', '--all');
  await sh(dir, 'commit', '--quiet', '-m', 'initial');
  return dir;
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

export function read(dir: string, path: string): string {
  return readFileSync(join(dir, path), 'utf8');
}

export async function rev(dir: string, ref: string): Promise<string> {
  return (await sh(dir, 'rev-parse', ref)).trim();
}

export async function status(dir: string): Promise<string> {
  return sh(dir, 'status', '--porcelain');
}

/**
 * Machines for the remote workspace tests: a bare `origin` (from a repository with one commit on
 * `main`) and `count` separate clones of it, each standing in for another machine.
 */
export async function originAndClones(
  count: number,
  files?: Record<string, string>,
): Promise<{ origin: string; clones: string[] }> {
  const seed = await tmpRepo(files);
  const origin = join(dirname(seed), 'origin.git');
  await sh(dirname(seed), 'clone', '--quiet', '--bare', seed, origin);
  const clones: string[] = [];
  for (let i = 0; i < count; i++) {
    const clone = join(dirname(seed), `machine-${i + 1}`);
    await sh(dirname(seed), 'clone', '--quiet', origin, clone);
    await sh(clone, 'config', 'user.name', `Machine ${i + 1}`);
    await sh(clone, 'config', 'user.email', `machine${i + 1}@example.com`);
    clones.push(realpathSync(clone));
  }
  return { origin: realpathSync(origin), clones };
}
