import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { printable } from '../../core/printable.js';
import { PROCESS_TAG_ENV } from '../../core/runtime.js';
import { processTag, supervisedArgv } from '../../runtimes/supervisor.js';

/** What a hook's output may put in the watcher's log: Symphony's 2 KiB, in at most this many lines. */
const MAX_OUTPUT_BYTES = 2048;
const MAX_OUTPUT_LINES = 20;
/** A hook ended (timeout, stop) gets SIGTERM, then SIGKILL this much later. */
const KILL_GRACE_MS = 1000;

export interface HookProcess {
  /** The script, as WORKFLOW.md has it: run by `sh -lc`, never rendered or interpolated. */
  script: string;
  cwd: string;
  timeoutMs: number;
  env: NodeJS.ProcessEnv;
  /** Aborted (the watcher stops): the hook's process group is killed. */
  signal?: AbortSignal;
}

export type HookOutcome = { ok: true; output: string[] } | { ok: false; why: string; output: string[] };

/**
 * Runs one workspace hook as Symphony does (`sh -lc <script>` in the workspace, stdout and
 * stderr together), under the supervisor agents run under (runtimes/supervisor.ts): a timeout, a
 * stop, or the watcher's own end however it ends (SIGKILL included) ends the hook and everything
 * it started. Its output comes back cut to 2 KiB and 20 lines, each made printable.
 */
export function runHookProcess(hook: HookProcess): Promise<HookOutcome> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let cut = false;
    let ended: 'timeout' | 'stopped' | null = null;
    const child = spawn(process.execPath, supervisedArgv('sh', ['-lc', hook.script], KILL_GRACE_MS), {
      cwd: hook.cwd,
      env: { ...hook.env, [PROCESS_TAG_ENV]: processTag('') },
      detached: true,
      // fd 3: the supervisor's lifeline, open as long as this process lives
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    const [, stdout, stderr, lifeline] = child.stdio as unknown as [null, Socket, Socket, Socket];
    lifeline.on('error', () => undefined);
    lifeline.resume();
    const keep = (chunk: Buffer) => {
      if (kept >= MAX_OUTPUT_BYTES) {
        cut = true;
        return;
      }
      const part = chunk.subarray(0, MAX_OUTPUT_BYTES - kept);
      if (part.length < chunk.length) cut = true;
      chunks.push(part);
      kept += part.length;
    };
    stdout.on('data', keep);
    stderr.on('data', keep);
    let backstop: NodeJS.Timeout | null = null;
    const killGroup = (why: 'timeout' | 'stopped') => {
      ended ??= why;
      // the supervisor ends the hook's group and every process carrying its tag
      signalGroup(child.pid, 'SIGTERM');
      backstop ??= setTimeout(() => signalGroup(child.pid, 'SIGKILL'), KILL_GRACE_MS + 1000);
      // a process that left the group (setsid) may still hold the pipes: stop waiting for them
      stdout.destroy();
      stderr.destroy();
    };
    const timer = setTimeout(() => killGroup('timeout'), hook.timeoutMs);
    const onAbort = () => killGroup('stopped');
    hook.signal?.addEventListener('abort', onAbort, { once: true });
    const finish = (outcome: { ok: true } | { ok: false; why: string }) => {
      clearTimeout(timer);
      if (backstop) clearTimeout(backstop);
      hook.signal?.removeEventListener('abort', onAbort);
      const output = outputLines(Buffer.concat(chunks).toString('utf8'), cut);
      resolve({ ...outcome, output });
    };
    child.on('error', (error) => finish({ ok: false, why: `not started: ${error.message}` }));
    child.on('close', (code, signal) => {
      if (ended === 'timeout') finish({ ok: false, why: `timed out after ${hook.timeoutMs} ms: killed` });
      else if (ended === 'stopped') finish({ ok: false, why: 'stopped: killed' });
      else if (code === 0) finish({ ok: true });
      else finish({ ok: false, why: code === null ? `killed by ${signal}` : `exit ${code}` });
    });
  });
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  try {
    if (pid) process.kill(-pid, signal);
  } catch {
    // it had ended
  }
}

function outputLines(text: string, cut: boolean): string[] {
  const lines = text
    .split('\n')
    .map((line) => printable(line))
    .filter((line) => line !== '');
  const shown = lines.slice(0, MAX_OUTPUT_LINES);
  if (cut || lines.length > shown.length) shown.push('… (output cut)');
  return shown;
}
