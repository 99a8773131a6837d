import path from 'node:path';
import { isCliRuntime, RUNTIME_NAMES, type RuntimeName } from '../core/runtimes.js';
import { isExecutableFile, isOnPath } from '../pipeline/on-path.js';
import { cliBin } from './registry.js';

/**
 * The runtimes this machine can run: every one but the CLIs whose program is not there (a path
 * that is no executable file, a name on no PATH directory). What `troupe worker` serves unless
 * told otherwise, so it takes no task it could only fail.
 */
export function installedRuntimes(env: NodeJS.ProcessEnv = process.env): RuntimeName[] {
  return RUNTIME_NAMES.filter((runtime) => {
    if (!isCliRuntime(runtime)) return true;
    const bin = cliBin(runtime, undefined, env);
    return bin.includes(path.sep) || bin.includes('/')
      ? isExecutableFile(bin)
      : isOnPath(bin, env.PATH ?? '');
  });
}
