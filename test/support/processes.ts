import { readdirSync, readFileSync } from 'node:fs';

/** Processes on this machine, as the kill tests look at them (Linux: /proc). */

/** A live process (a zombie waiting for its reaper has ended). */
export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** The pids of live processes whose TROUPE_AGENT_TAG starts with `prefix` (a task id and `/`). */
export function taggedPids(prefix: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || !alive(pid)) continue;
    let environ = '';
    try {
      environ = readFileSync(`/proc/${name}/environ`, 'latin1');
    } catch {
      continue;
    }
    if (environ.split('\0').some((entry) => entry.startsWith(`TROUPE_AGENT_TAG=${prefix}`))) found.push(pid);
  }
  return found;
}
