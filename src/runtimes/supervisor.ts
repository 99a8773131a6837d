import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { LeftoverProcess } from '../core/events.js';
import { PROCESS_TAG_ENV } from '../core/runtime.js';

/**
 * A small Node process between troupe and each agent it starts, so that an agent never outlives
 * troupe, whatever ends troupe (SIGKILL of its pid or its group, the OOM killer, a closed
 * terminal): troupe's exit handlers do not run then, but the kernel closes its end of the
 * lifeline (fd 3), and the supervisor, in a process group of its own, ends the agent's tree.
 *
 * The tree is the agent's process group plus every process whose environment carries the
 * agent's tag (`TROUPE_AGENT_TAG`): children that called `setsid` leave the group but keep the
 * environment they inherited (the way Jenkins finds a build's processes). The same search, by
 * a task's tag prefix, is what a resumed task runs before a stage runs again (`endTagged`).
 *
 * The program is `supervise` below, run with `node -e` (its source is the function's own text),
 * so it needs no file of its own wherever troupe's code is bundled or loaded from.
 */

/** What the supervisor tells troupe on the lifeline, one JSON line each. */
export type SupervisorMessage =
  | { pid: number }
  | { spawnError: { code: string; syscall: string; message: string } };

/** `node` arguments that run `bin args…` under a supervisor (grace: SIGTERM to SIGKILL, in ms). */
export function supervisedArgv(bin: string, args: readonly string[], graceMs: number): string[] {
  return ['-e', PROGRAM, '--', 'run', String(graceMs), bin, ...args];
}

/** The tag of one process tree: the task's prefix (`taskProcessTag`), this process, a nonce. */
export function processTag(taskPrefix: string): string {
  return `${ownTagPrefix(taskPrefix)}${Math.random().toString(36).slice(2, 10)}`;
}

function ownTagPrefix(taskPrefix: string): string {
  return `${taskPrefix}${process.pid.toString(36)}.`;
}

/**
 * Ends every process on this machine whose tag starts with `prefix` (SIGTERM, then SIGKILL after
 * `graceMs`) and confirms each is gone; resolves with what it ended. Processes this process
 * started itself are its own to end (a claude kept up between a task's stages, say), and are left.
 */
export function endTagged(prefix: string, graceMs = 1000): Promise<LeftoverProcess[]> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['-e', PROGRAM, '--', 'sweep', String(graceMs), prefix, ownTagPrefix(prefix)],
      { env: {}, timeout: graceMs + 10_000 },
      (error, stdout) => {
        if (error) reject(new Error(`could not end the processes tagged ${prefix}: ${error.message}`));
        else resolve(JSON.parse(stdout) as LeftoverProcess[]);
      },
    );
  });
}

declare const TAG_ENV: string;

/**
 * The tag of the agent this process runs inside, if any: its own environment's, or, on Linux,
 * an ancestor's (a child that dropped the variable still has parents that carry it).
 */
export function agentAbove(): string | null {
  const own = process.env[PROCESS_TAG_ENV];
  if (own) return own;
  let pid = process.ppid;
  for (let depth = 0; pid > 1 && depth < 64; depth++) {
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
      const tag = environ.find((entry) => entry.startsWith(`${PROCESS_TAG_ENV}=`));
      if (tag) return tag.slice(PROCESS_TAG_ENV.length + 1);
      pid = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      return null; // no /proc, or a parent that is not ours to read
    }
  }
  return null;
}

// Runs in its own process, with only what `node -e` gives it (and TAG_ENV): no imports, no closure.
function supervise(require: NodeJS.Require): void {
  const fs = require('node:fs') as typeof import('node:fs');
  const net = require('node:net') as typeof import('node:net');
  const { spawn } = require('node:child_process') as typeof import('node:child_process');
  const TAG = TAG_ENV;
  const [mode = '', graceText = '1000', ...rest] = process.argv.slice(1);
  const graceMs = Number(graceText) || 0;
  const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

  const taggedPids = (match: (tag: string) => boolean): number[] => {
    let names: string[];
    try {
      names = fs.readdirSync('/proc');
    } catch {
      return []; // no /proc (macOS): the process group is all there is
    }
    const found: number[] = [];
    for (const name of names) {
      const pid = Number(name);
      if (!Number.isInteger(pid) || pid === process.pid) continue;
      let environ: string;
      try {
        environ = fs.readFileSync(`/proc/${name}/environ`, 'latin1');
      } catch {
        continue; // gone, or another user's
      }
      for (const entry of environ.split('\0')) {
        if (entry.startsWith(`${TAG}=`) && match(entry.slice(TAG.length + 1))) {
          found.push(pid);
          break;
        }
      }
    }
    return found;
  };
  const signal = (pid: number, sig: NodeJS.Signals) => {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  };
  const groupAlive = (pgid: number) => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  // SIGTERM to the group and the tagged, SIGKILL to what is left after the grace period
  const endAll = async (match: (tag: string) => boolean, group: number | null, grace: number) => {
    const ended = new Map<number, string>();
    const note = (pids: number[]) => {
      for (const pid of pids) {
        if (ended.has(pid)) continue;
        let command = '';
        try {
          command = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
        } catch {
          // gone meanwhile
        }
        ended.set(pid, command);
      }
    };
    const hit = (sig: NodeJS.Signals) => {
      if (group !== null) signal(-group, sig);
      const pids = taggedPids(match);
      note(pids);
      for (const pid of pids) signal(pid, sig);
      return pids.length > 0 || (group !== null && groupAlive(group));
    };
    const deadline = Date.now() + grace;
    let left = hit('SIGTERM');
    while (left && Date.now() < deadline) {
      await sleep(50);
      left = taggedPids(match).length > 0 || (group !== null && groupAlive(group));
    }
    for (let round = 0; left && round < 100; round++) {
      left = hit('SIGKILL');
      if (left) await sleep(20);
    }
    return [...ended].map(([pid, command]) => ({ pid, command }));
  };

  if (mode === 'sweep') {
    const [prefix = '', own = ''] = rest;
    if (!prefix) process.exit(2);
    const leftover = (tag: string) => tag.startsWith(prefix) && !(own && tag.startsWith(own));
    void endAll(leftover, null, graceMs).then((ended) => {
      process.stdout.write(JSON.stringify(ended));
    });
    return;
  }

  const [bin = '', ...args] = rest;
  const ownTag = process.env[TAG] ?? '';
  const mine = (tag: string) => ownTag !== '' && tag === ownTag;
  const lifeline = new net.Socket({ fd: 3 });
  const tell = (message: unknown) => {
    try {
      lifeline.write(`${JSON.stringify(message)}\n`);
    } catch {
      // troupe is gone: the teardown below follows
    }
  };
  const child = spawn(bin, args, { stdio: 'inherit', detached: true });
  let ending: Promise<unknown> | null = null;
  const finish = (code: number | null, sig: NodeJS.Signals | null) => {
    for (const name of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.removeAllListeners(name);
    lifeline.destroy();
    if (sig) process.kill(process.pid, sig);
    process.exit(code ?? 1);
  };
  const teardown = (grace: number) => {
    ending ??= endAll(mine, child.pid ?? null, grace);
    return ending;
  };
  child.on('spawn', () => tell({ pid: child.pid }));
  child.on('error', (error: NodeJS.ErrnoException) => {
    tell({ spawnError: { code: error.code ?? '', syscall: error.syscall ?? '', message: error.message } });
    lifeline.end(() => process.exit(127));
  });
  // the agent ended: whatever it left running (an MCP server, a daemon) ends with it
  child.on('exit', (code, sig) => {
    void Promise.resolve(ending)
      .then(() => endAll(mine, child.pid ?? null, 0))
      .then(() => finish(code, sig));
  });
  // troupe ended, however it ended: the kernel closed its end of the lifeline
  const ownerGone = () => void teardown(Math.min(graceMs, 500));
  lifeline.on('end', ownerGone);
  lifeline.on('error', ownerGone);
  lifeline.on('close', ownerGone);
  lifeline.resume();
  for (const name of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(name, () => void teardown(graceMs));
}

const PROGRAM = `const TAG_ENV = ${JSON.stringify(PROCESS_TAG_ENV)};\n(${supervise.toString()})(require)`;
