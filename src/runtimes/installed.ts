import path from 'node:path';
import type { RuntimeName } from '../core/pipeline.js';
import { isExecutableFile, isOnPath } from '../pipeline/on-path.js';
import { RUNTIMES } from '../pipeline/schema.js';

/** The runtimes that are CLIs a machine may lack; the others (HTTP, a command, a script, the bus) run anywhere. */
export const CLI_RUNTIMES = ['claude', 'gemini', 'codex'] as const;
export type CliRuntime = (typeof CLI_RUNTIMES)[number];

/** Where a CLI runtime's program is: TROUPE_<NAME>_BIN, else its name on PATH. */
export function cliBin(cli: CliRuntime, env: NodeJS.ProcessEnv = process.env): string {
  return env[`TROUPE_${cli.toUpperCase()}_BIN`] ?? cli;
}

/**
 * The runtimes this machine can run: every one but the CLIs whose program is not there (a path
 * that is no executable file, a name on no PATH directory). What `troupe worker` serves unless
 * told otherwise, so it takes no task it could only fail.
 */
export function installedRuntimes(env: NodeJS.ProcessEnv = process.env): RuntimeName[] {
  return RUNTIMES.filter((runtime) => {
    if (!(CLI_RUNTIMES as readonly string[]).includes(runtime)) return true;
    const bin = cliBin(runtime as CliRuntime, env);
    return bin.includes(path.sep) || bin.includes('/')
      ? isExecutableFile(bin)
      : isOnPath(bin, env.PATH ?? '');
  });
}
