import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { RuntimeError, type RuntimeEvent, type RuntimeRequest } from '../core/runtime.js';
import { abortError, type CliParser, missingCli, withContext } from './cli-run.js';
import { parseJsonLine } from './jsonl.js';
import { type CliExit, CliProcess } from './process.js';

/**
 * Claude Code kept up between the consecutive stages of an agent that resumes its own
 * conversation (`resume: true`): `claude -p --input-format stream-json`, one `user` message on
 * stdin a stage, each answered by one `result`. A new `claude -p --resume` costs seconds of
 * start-up before the model sees a token; a turn sent to the process that served the previous
 * stage costs a fraction of a second, and the model gets the same request (bench/cli-startup.js,
 * docs/benchmarks.md). A process serves one conversation, one turn at a time: it is parked under
 * its session id after a successful turn, taken by the next stage that resumes that session with
 * the same flags in the same folder, and closed after a failed turn, or when idle for `idleMs`
 * (a task that ended, waits, or moved on). A parked process never keeps troupe alive.
 */

export interface StreamLaunch {
  bin: string;
  /** The argv for a new process, without `--resume` and without the prompt. */
  args: string[];
  env?: Record<string, string | undefined>;
  install: string;
}

interface Kept {
  key: string;
  proc: CliProcess;
  lines: AsyncGenerator<string>;
  /** Its exit, awaited from the start: a parked process that died is not handed a turn. */
  exit: Promise<CliExit>;
  gone: boolean;
  timer: NodeJS.Timeout | null;
  /** The process's running totals, which its `result` lines report (not the turn's own). */
  spent: Record<string, Record<string, number>>;
  cost: number;
}

export const KEEP_IDLE_MS = 60_000;

/** troupe's `claude -p` argv (made with an empty prompt, no resume) for a process fed on stdin. */
export function keptUpArgs(printArgs: readonly string[]): string[] {
  const args = printArgs.at(-2) === '--' ? printArgs.slice(0, -2) : [...printArgs];
  return [args[0]!, '--input-format', 'stream-json', ...args.slice(1)];
}

export class ClaudeStreamSessions {
  private readonly parked = new Map<string, Kept>();

  constructor(private readonly idleMs = KEEP_IDLE_MS) {}

  /** The stage as one turn: of the parked process of its session if it matches, else of a new one. */
  async *run(request: RuntimeRequest, launch: StreamLaunch, parser: CliParser): AsyncGenerator<RuntimeEvent> {
    const key = JSON.stringify([launch.bin, launch.args, launch.env ?? {}, request.cwd]);
    const kept = this.take(request.resumeSessionId, key) ?? this.start(request, launch, key);
    const timeout = AbortSignal.timeout(Math.max(1, request.timeoutMs));
    const signal = AbortSignal.any([request.signal, timeout]);
    const stop = () => kept.proc.stop();
    const raw = request.rawLogPath ? openAppend(request.rawLogPath) : null;
    let parked = false;
    let text = '';
    let stopError: RuntimeError | null = null;
    try {
      if (signal.aborted) throw abortError(request, timeout);
      signal.addEventListener('abort', stop, { once: true });
      parser.attach?.({
        stop(error) {
          stopError ??= error;
          stop();
        },
      });
      kept.proc.hold(true);
      kept.proc.write(
        `${JSON.stringify({ type: 'user', message: { role: 'user', content: request.prompt } })}\n`,
      );
      for (;;) {
        const next = await kept.lines.next();
        if (next.done || signal.aborted) break;
        const line = this.turnUsage(kept, next.value);
        raw?.write(`${line}\n`);
        for (const event of parser.line(line)) {
          if (event.type === 'text') text += event.text;
          yield event;
        }
        if (stopError) break;
        const event = parseJsonLine(line);
        if (event?.type !== 'result') continue;
        // a failed turn is classified as a new process's would be: from its exit and stderr too
        if (event.is_error === true || (event.subtype ?? 'success') !== 'success') {
          kept.proc.endInput();
          continue;
        }
        const outcome = parser.finish({ exitCode: 0, signal: null, stderr: '' });
        if (outcome instanceof RuntimeError) throw withContext(outcome, text, parser);
        // parked before the result is handed over: a caller may stop reading at the result
        const session = outcome.meta?.session_id;
        if (typeof session === 'string') parked = this.park(session, kept);
        yield outcome;
        return;
      }
      // the process ended, was stopped, or failed the turn (and was told to end)
      if (signal.aborted) kept.proc.stop();
      const exit = await kept.exit;
      if (exit.spawnError) throw missingCli({ runtime: 'claude', ...launch }, exit.spawnError);
      if (stopError) throw withContext(stopError, text, parser);
      if (signal.aborted) throw withContext(abortError(request, timeout), text, parser);
      const outcome = parser.finish(exit);
      if (outcome instanceof RuntimeError) throw withContext(outcome, text, parser);
      yield outcome;
    } finally {
      signal.removeEventListener('abort', stop);
      if (raw) await new Promise((resolve) => raw.end(resolve));
      parser.dispose?.();
      if (!parked) await close(kept);
    }
  }

  /** Closes every parked process (a troupe that is done with its tasks). */
  async closeAll(): Promise<void> {
    const all = [...this.parked.values()];
    this.parked.clear();
    await Promise.all(all.map(close));
  }

  private take(session: string | null, key: string): Kept | null {
    const kept = session ? this.parked.get(session) : undefined;
    if (!kept || !session) return null;
    this.parked.delete(session);
    if (kept.timer) clearTimeout(kept.timer);
    kept.timer = null;
    // other flags (a changed model, permissions, folder): a new process, as `--resume` would get
    if (kept.key === key && !kept.gone) return kept;
    void close(kept);
    return null;
  }

  private start(request: RuntimeRequest, launch: StreamLaunch, key: string): Kept {
    const args = request.resumeSessionId
      ? [...launch.args, '--resume', request.resumeSessionId]
      : launch.args;
    const proc = new CliProcess({
      bin: launch.bin,
      args,
      cwd: request.cwd,
      // a kept process serves the agent's next stages too: it keeps the env of the stage that started it
      ...(launch.env || request.env ? { env: { ...request.env, ...launch.env } } : {}),
      openStdin: true,
      ...(request.processTag ? { tagPrefix: request.processTag } : {}),
    });
    const kept: Kept = {
      key,
      proc,
      lines: proc.lines(),
      exit: proc.wait(),
      gone: false,
      timer: null,
      spent: {},
      cost: 0,
    };
    void kept.exit.then(() => {
      kept.gone = true;
    });
    return kept;
  }

  private park(session: string, kept: Kept): boolean {
    if (kept.gone) return false;
    const previous = this.parked.get(session);
    if (previous) void close(previous);
    kept.proc.hold(false);
    kept.timer = setTimeout(() => {
      if (this.parked.get(session) === kept) this.parked.delete(session);
      void close(kept);
    }, this.idleMs);
    kept.timer.unref();
    this.parked.set(session, kept);
    return true;
  }

  /**
   * A `result` line with the turn's own cost and tokens: a kept-up Claude reports `modelUsage`
   * and `total_cost_usd` summed over all its turns (its `usage` is the turn's own).
   */
  private turnUsage(kept: Kept, line: string): string {
    const result = parseJsonLine(line);
    if (result?.type !== 'result') return line;
    if (typeof result.total_cost_usd === 'number') {
      const total = result.total_cost_usd;
      result.total_cost_usd = total - kept.cost;
      kept.cost = total;
    }
    const models = result.modelUsage;
    if (models && typeof models === 'object') {
      for (const [name, figures] of Object.entries(models as Record<string, Record<string, unknown>>)) {
        kept.spent[name] ??= {};
        const before = kept.spent[name];
        for (const [field, value] of Object.entries(figures)) {
          if (typeof value !== 'number' || !/Tokens$|Requests$|^costUSD$/.test(field)) continue;
          figures[field] = value - (before[field] ?? 0);
          before[field] = value;
        }
      }
    }
    return JSON.stringify(result);
  }
}

async function close(kept: Kept): Promise<void> {
  if (kept.timer) clearTimeout(kept.timer);
  if (!kept.gone) kept.proc.stop();
  await kept.exit;
}

function openAppend(file: string): WriteStream {
  mkdirSync(path.dirname(file), { recursive: true });
  return createWriteStream(file, { flags: 'a' });
}

/** The one pool of a troupe process: stages of any task, each keyed by its session. */
export const claudeStreamSessions = new ClaudeStreamSessions();
