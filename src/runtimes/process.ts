import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { LineSplitter } from './jsonl.js';

/**
 * A CLI run as troupe needs it: argv only (no shell), stdin closed (Codex hangs forever on an
 * open pipe, Claude waits 3 s), its own process group so that a stop kills everything it
 * started (MCP servers, shells), and every byte it writes on stdout kept for debugging.
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
  /** Between SIGTERM to the group and SIGKILL. */
  killGraceMs?: number;
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
const live = new Set<number>();
let exitHookInstalled = false;

export class CliProcess {
  private readonly child: ResultPromise;
  private readonly splitter = new LineSplitter();
  private stderrText = '';
  private readonly rawOut: WriteStream | null;
  private rawErr: WriteStream | null = null;
  private killTimer: NodeJS.Timeout | null = null;
  private exited = false;
  readonly pid: number | undefined;

  constructor(private readonly options: CliProcessOptions) {
    installExitHook();
    this.rawOut = options.rawLogPath ? openAppend(options.rawLogPath) : null;
    if (this.rawOut && options.rawHeader) this.rawOut.write(`${JSON.stringify(options.rawHeader)}\n`);
    this.child = execa(options.bin, options.args, {
      cwd: options.cwd,
      env: options.env ?? {},
      extendEnv: true,
      stdin: options.openStdin || options.input !== undefined ? 'pipe' : 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
      detached: true,
      buffer: false,
      reject: false,
      encoding: 'buffer',
      stripFinalNewline: false,
      cleanup: false,
      ...(options.input === undefined || options.openStdin ? {} : { input: options.input }),
    });
    // a CLI that died while it waited for a turn: the write fails, its exit tells why
    if (options.openStdin) this.child.stdin?.on('error', () => undefined);
    this.pid = this.child.pid;
    if (this.pid) live.add(this.pid);
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.stderrText += chunk.toString('utf8');
      if (this.stderrText.length > STDERR_KEEP * 2) this.stderrText = this.stderrText.slice(-STDERR_KEEP);
      if (options.rawLogPath) {
        this.rawErr ??= openAppend(`${options.rawLogPath.replace(/\.jsonl$/, '')}.stderr`);
        this.rawErr.write(chunk);
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
    const handles = [this.child, this.child.stdin, this.child.stdout, this.child.stderr] as Array<{
      ref?: () => void;
      unref?: () => void;
    } | null>;
    for (const handle of handles) (keep ? handle?.ref : handle?.unref)?.call(handle);
  }

  /** Ends the whole process group: SIGTERM, then SIGKILL after the grace period. */
  stop(): void {
    if (!this.pid) return;
    killGroup(this.pid, 'SIGTERM');
    this.killTimer ??= setTimeout(() => {
      killGroup(this.pid!, 'SIGKILL');
      // a grandchild in a group of its own may still hold stdout open
      this.child.stdout?.destroy();
      this.child.stderr?.destroy();
    }, this.options.killGraceMs ?? 2000);
    this.killTimer.unref();
  }

  /** Waits for the exit (so no zombie is left) and kills whatever the CLI left in its group. */
  async wait(): Promise<CliExit> {
    const result = await this.child;
    this.exited = true;
    if (this.pid) {
      killGroup(this.pid, 'SIGKILL');
      live.delete(this.pid);
    }
    if (this.killTimer) clearTimeout(this.killTimer);
    await Promise.all([closeStream(this.rawOut), closeStream(this.rawErr)]);
    const cause = (result as { cause?: unknown }).cause as NodeJS.ErrnoException | undefined;
    const spawnError =
      result.exitCode === undefined &&
      cause &&
      typeof cause.code === 'string' &&
      cause.syscall?.startsWith('spawn')
        ? cause
        : undefined;
    return {
      exitCode: result.exitCode ?? null,
      signal: result.signal ?? null,
      stderr: this.stderrText.slice(-STDERR_KEEP),
      ...(spawnError ? { spawnError } : {}),
    };
  }

  get hasExited(): boolean {
    return this.exited;
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

/** A troupe that exits on its own (Ctrl-C, an error) takes its CLIs with it. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const pid of live) killGroup(pid, 'SIGKILL');
  });
}

function openAppend(file: string): WriteStream {
  mkdirSync(path.dirname(file), { recursive: true });
  return createWriteStream(file, { flags: 'a' });
}

function closeStream(stream: WriteStream | null): Promise<void> {
  if (!stream) return Promise.resolve();
  return new Promise((resolve) => stream.end(resolve));
}
