import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { mailbox } from '../bus/layout.js';
import { packageRoot } from '../package-root.js';

/**
 * Starts `troupe wake` for an agent in the background, detached from this process (it outlives
 * `launch`), its output appended to `agents/<h>/extensions/troupe/wake.log`. Returns its pid.
 */
export function spawnWake(input: {
  root: string;
  me: string;
  pane?: string;
  replace?: boolean;
  extra?: string[];
  env?: NodeJS.ProcessEnv;
}): number | undefined {
  const dir = join(mailbox(input.root, input.me).dir, 'extensions', 'troupe');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const log = openSync(join(dir, 'wake.log'), 'a', 0o600);
  try {
    const args = [
      join(packageRoot(), 'bin', 'troupe.js'),
      'wake',
      '--me',
      input.me,
      '--root',
      input.root,
      ...(input.pane ? ['--pane', input.pane] : []),
      ...(input.replace ? ['--replace'] : []),
      ...(input.extra ?? []),
    ];
    const child = spawn(process.execPath, args, {
      detached: true,
      stdio: ['ignore', log, log],
      env: input.env ?? process.env,
    });
    child.unref();
    return child.pid;
  } finally {
    closeSync(log);
  }
}
