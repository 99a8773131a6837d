import { mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { writeFileAtomic } from '../bus/durable.js';

/**
 * The launch plans a person confirmed on a terminal (AMQ's launch trust), per project directory:
 * `$XDG_CONFIG_HOME/troupe/launch-trust.json` (`{"<project dir>": "<digest>"}`). It lives outside
 * the worktree, so a commit that changes the roster (a command, an agent) cannot trust itself.
 */
export function launchTrustFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'troupe', 'launch-trust.json');
}

function read(file: string): Record<string, string> {
  try {
    const raw = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, string>) : {};
  } catch {
    return {};
  }
}

export function isLaunchTrusted(
  projectDir: string,
  digest: string,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  return read(launchTrustFile(env))[projectDir] === digest;
}

export function trustLaunch(projectDir: string, digest: string, env: NodeJS.ProcessEnv = process.env): void {
  const file = launchTrustFile(env);
  const trusted = { ...read(file), [projectDir]: digest };
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileAtomic(dirname(file), basename(file), Buffer.from(`${JSON.stringify(trusted, null, 2)}\n`));
}
