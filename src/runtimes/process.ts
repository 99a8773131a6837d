import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import type { Socket } from 'node:net';
import path from 'node:path';
import { PROCESS_TAG_ENV, WITHHELD_FROM_AGENTS } from '../core/runtime.js';
import { LineSplitter } from './jsonl.js';
import { processTag, type SupervisorMessage, supervisedArgv } from './supervisor.js';

/**
 * A CLI run as troupe needs it: argv only (no shell), stdin closed (Codex hangs forever on an
 * open pipe, Claude waits 3 s), every byte it writes on stdout kept for debugging, and under a
 * supervisor (supervisor.ts) that ends its whole process tree when it is stopped, when it exits,
 * and when troupe itself dies, however it dies.
 */

export interface CliProcessOptions {
  bin: string;
  args: readonly string[];
  cwd: string;
  /** Added to the parent's environment; `undefined` removes a variable. */
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed (a prompt too long for argv); default: no stdin. */
  input?: string;
  /** Appends stdout verbatim (and stderr beside it, as `<name>.stderr`). */
  rawLogPath?: string | null;
  /** Written to the raw log as one JSON line before the output (what was run, and when). */
  rawHeader?: Record<string, unknown>;
  /** stdin stays open for `write` (a CLI that serves several turns); `input` is then ignored. */
  openStdin?: boolean;
  /** Between SIGTERM to the process tree and SIGKILL. */
  killGraceMs?: number;
  /** What the process's tag starts with (a task's `taskProcessTag`), so a resume can find it. */
  tagPrefix?: string;
}

export interface CliExit {
  exitCode: number | null;
  signal: string | null;
  /** The last 64 KiB of stderr. */
  stderr: string;
  /** Set when the binary could not be started (ENOENT, EACCES). */
  spawnError?: NodeJS.ErrnoException;
}

const STDERR_KEEP = 64 * 1024;

export class CliProcess {
  private readonly child: ChildProcess;
  private readonly lifeline: Socket;
  private readonly splitter = new LineSplitter();
  private stderrText = '';
  private readonly rawOut: WriteStream | null;
  private rawErr: WriteStream | null = null;
  private killTimer: NodeJS.Timeout | null = null;
  private exited = false;
  private spawnError: NodeJS.ErrnoException | undefined;
  private readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The supervisor's pid (the leader of its own process group). */
  readonly pid: number | undefined;
  /** The agent's own pid, once the supervisor has started it. */
  agentPid: number | undefined;
  /** Every process of this agent carries it in its environment (`TROUPE_AGENT_TAG`). */
  readonly tag: string;

  constructor(private readonly options: CliProcessOptions) {
    this.rawOut = options.rawLogPath ? openAppend(options.rawLogPath) : null;
    if (this.rawOut && options.rawHeader) this.rawOut.write(`${JSON.stringify(options.rawHeader)}\n`);
    this.tag = processTag(options.tagPrefix ?? '');
    const withStdin = options.openStdin || options.input !== undefined;
    this.child = spawn(
      process.execPath,
      supervisedArgv(options.bin, options.args, options.killGraceMs ?? 2000),
      {
        cwd: options.cwd,
        env: { ...childEnv(options.env), [PROCESS_TAG_ENV]: this.tag },
        stdio: [withStdin ? 'pipe' : 'ignore', 'pipe', 'pipe', 'pipe'],
        // a group of its own: a signal to troupe's group does not reach it before it can act
        detached: true,
      },
    );
    this.closed = new Promise((resolve) => {
      this.child.once('close', (code, signal) => resolve({ code, signal }));
      this.child.once('error', (error: NodeJS.ErrnoException) => {
        this.spawnError ??= error;
        resolve({ code: null, signal: null });
      });
    });
    this.lifeline = this.child.stdio[3] as Socket;
    this.listen(this.lifeline);
    if (this.child.stdin) {
      // a CLI that died while it waited for a turn: the write fails, its exit tells why
      this.child.stdin.on('error', () => undefined);
      if (!options.openStdin && options.input !== undefined) this.child.stdin.end(options.input);
    }
    this.pid = this.child.pid;
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.stderrText += chunk.toString('utf8');
      if (this.stderrText.length > STDERR_KEEP * 2) this.stderrText = this.stderrText.slice(-STDERR_KEEP);
      if (options.rawLogPath) {
        this.rawErr ??= openAppend(`${options.rawLogPath.replace(/\.jsonl$/, '')}.stderr`);
        this.rawErr.write(chunk);
      }
    });
  }

  private listen(lifeline: Socket): void {
    const splitter = new LineSplitter();
    lifeline.on('error', () => undefined);
    lifeline.on('data', (chunk: Buffer) => {
      for (const line of splitter.push(chunk)) {
        let message: SupervisorMessage;
        try {
          message = JSON.parse(line) as SupervisorMessage;
        } catch {
          continue;
        }
        if ('pid' in message) this.agentPid = message.pid;
        else this.spawnError = Object.assign(new Error(message.spawnError.message), message.spawnError);
      }
    });
  }

  /** stdout, line by line, as the CLI writes it. */
  async *lines(): AsyncGenerator<string> {
    const stdout = this.child.stdout;
    if (!stdout) return;
    try {
      for await (const chunk of stdout as AsyncIterable<Buffer>) {
        this.rawOut?.write(chunk);
        for (const line of this.splitter.push(chunk)) yield line;
      }
    } catch {
      // the stream was destroyed by stop(): what was read is all there is
    }
    for (const line of this.splitter.end()) yield line;
  }

  /** Writes to the open stdin (`openStdin`). */
  write(text: string): void {
    this.child.stdin?.write(text);
  }

  /** Closes the open stdin: a CLI serving turns then ends by itself. */
  endInput(): void {
    this.child.stdin?.end();
  }

  /** Whether an idle process may keep troupe alive: not while it only waits for a next turn. */
  hold(keep: boolean): void {
    const handles = [
      this.child,
      this.child.stdin,
      this.child.stdout,
      this.child.stderr,
      this.lifeline,
    ] as Array<{
      ref?: () => void;
      unref?: () => void;
    } | null>;
    for (const handle of handles) (keep ? handle?.ref : handle?.unref)?.call(handle);
  }

  /**
   * Ends the whole process tree: the supervisor sends SIGTERM, then SIGKILL after the grace
   * period; should the supervisor not manage, troupe kills both groups a second later.
   */
  stop(): void {
    if (!this.pid || this.exited) return;
    signalGroup(this.pid, 'SIGTERM');
    this.killTimer ??= setTimeout(
      () => {
        if (this.agentPid) signalGroup(this.agentPid, 'SIGKILL');
        signalGroup(this.pid!, 'SIGKILL');
        // a grandchild that left the agent's tree may still hold stdout open
        this.child.stdout?.destroy();
        this.child.stderr?.destroy();
      },
      (this.options.killGraceMs ?? 2000) + 1000,
    );
    this.killTimer.unref();
  }

  /** Waits for the exit; the supervisor has by then ended whatever the CLI left running. */
  async wait(): Promise<CliExit> {
    const result = await this.closed;
    this.exited = true;
    if (this.killTimer) clearTimeout(this.killTimer);
    this.lifeline.destroy();
    await Promise.all([closeStream(this.rawOut), closeStream(this.rawErr)]);
    return {
      exitCode: this.spawnError ? null : result.code,
      signal: this.spawnError ? null : result.signal,
      stderr: this.stderrText.slice(-STDERR_KEEP),
      ...(this.spawnError ? { spawnError: this.spawnError } : {}),
    };
  }

  get hasExited(): boolean {
    return this.exited;
  }
}

function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of WITHHELD_FROM_AGENTS) delete env[name];
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

function openAppend(file: string): WriteStream {
  mkdirSync(path.dirname(file), { recursive: true });
  return createWriteStream(file, { flags: 'a' });
}

function closeStream(stream: WriteStream | null): Promise<void> {
  if (!stream) return Promise.resolve();
  return new Promise((resolve) => stream.end(resolve));
}
