import { execa } from 'execa';
import { type CommandGateOptions, PROCESS_TAG_ENV, WITHHELD_FROM_AGENTS } from '../core/runtime.js';
import { processTag, supervisedArgv } from './supervisor.js';

export interface CommandGateResult {
  decision: 'approved' | 'rejected';
  reason: string;
}

/**
 * A `gate: {type: command}`: the pipeline author's shell command, run in the task's working
 * directory, under the supervisor agents run under (a test run must not outlive troupe either).
 * Exit 0 approves; anything else rejects, with the tail of what it printed.
 */
export async function runCommandGate(
  command: string,
  options: CommandGateOptions,
): Promise<CommandGateResult> {
  const result = await execa(process.execPath, supervisedArgv('/bin/sh', ['-c', command], 1500), {
    cwd: options.cwd,
    env: {
      ...Object.fromEntries(WITHHELD_FROM_AGENTS.map((name) => [name, undefined])),
      ...options.env,
      [PROCESS_TAG_ENV]: processTag(options.processTag ?? ''),
    },
    all: true,
    reject: false,
    timeout: options.timeoutMs,
    cancelSignal: options.signal,
    forceKillAfterDelay: 2000,
    // fd 3: the supervisor's lifeline
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  if (result.exitCode === 0 && !result.timedOut && !result.isCanceled)
    return { decision: 'approved', reason: '' };
  const tail = tailOf(result.all ?? '', 20, 2000);
  const why = result.timedOut
    ? `command timed out after ${options.timeoutMs / 1000}s`
    : result.exitCode === undefined
      ? `command ended by ${result.signal ?? 'a signal'}`
      : `command exited with ${result.exitCode}`;
  return { decision: 'rejected', reason: tail ? `${why}:\n${tail}` : why };
}

function tailOf(text: string, lines: number, chars: number): string {
  const kept = text.trimEnd().split('\n').slice(-lines).join('\n');
  return kept.length > chars ? kept.slice(-chars) : kept;
}
