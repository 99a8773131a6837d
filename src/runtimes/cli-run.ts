import { rm } from 'node:fs/promises';
import { RuntimeError, type RuntimeEvent, type RuntimeRequest } from '../core/runtime.js';
import type { Usage } from '../core/usage.js';
import { type CliExit, CliProcess } from './process.js';

/**
 * The loop every CLI runtime shares: start the process, turn its stdout lines into events
 * through the runtime's parser, stop it on cancel, timeout or the parser's say-so, and end
 * with exactly one result or one RuntimeError.
 */

export type ResultEvent = Extract<RuntimeEvent, { type: 'result' }>;

/** What every CLI runtime (claude, gemini, codex) can be given; each adds its own. */
export interface CliRuntimeOptions {
  /** The binary (default: the CLI's name on PATH). */
  bin?: string;
  /** Extra environment for the CLI. */
  env?: Record<string, string | undefined>;
  /** The clock reset times are read against. */
  now?: () => Date;
}

export interface CliParser {
  /** The events one stdout line stands for (none for noise). */
  line(line: string): RuntimeEvent[];
  /** Called once with a way to end the run early (Codex's endless reconnects). */
  attach?(control: { stop(error: RuntimeError): void }): void;
  /** The outcome once the process has exited. */
  finish(exit: CliExit): ResultEvent | RuntimeError;
  /** Lines of stderr the user must see (a settings file the CLI skipped), as warnings. */
  stderrWarnings?(stderr: string): string[];
  /** What the run is known by so far (session id), for the meta of a failure. */
  meta(): Record<string, string | number | boolean>;
  dispose?(): void;
}

export interface CliInvocation {
  runtime: string;
  bin: string;
  args: string[];
  env?: Record<string, string | undefined>;
  input?: string;
  request: RuntimeRequest;
  parser: CliParser;
  /** How to install the CLI, for `missing_cli`. */
  install: string;
  /** Temp files and folders to remove at the end. */
  temp?: string[];
  /** argv with secrets masked, for the raw log header. */
  loggedArgs?: string[];
}

export async function* runCli(call: CliInvocation): AsyncGenerator<RuntimeEvent> {
  const { request, parser } = call;
  const timeout = AbortSignal.timeout(Math.max(1, request.timeoutMs));
  const signal = AbortSignal.any([request.signal, timeout]);
  let stopError: RuntimeError | null = null;
  let text = '';
  let proc: CliProcess | null = null;
  const stop = () => proc?.stop();
  try {
    if (signal.aborted) throw abortError(request, timeout);
    proc = new CliProcess({
      bin: call.bin,
      args: call.args,
      cwd: request.cwd,
      ...(call.env || request.env ? { env: { ...request.env, ...call.env } } : {}),
      ...(call.input !== undefined ? { input: call.input } : {}),
      rawLogPath: request.rawLogPath ?? null,
      ...(request.processTag ? { tagPrefix: request.processTag } : {}),
      rawHeader: {
        type: 'troupe.spawn',
        at: new Date().toISOString(),
        runtime: call.runtime,
        bin: call.bin,
        args: call.loggedArgs ?? call.args,
        cwd: request.cwd,
      },
    });
    signal.addEventListener('abort', stop, { once: true });
    parser.attach?.({
      stop(error) {
        stopError ??= error;
        stop();
      },
    });
    for await (const line of proc.lines()) {
      for (const event of parser.line(line)) {
        if (event.type === 'text') text += event.text;
        yield event;
      }
      if (stopError || signal.aborted) break;
    }
    if (stopError || signal.aborted) proc.stop();
    const exit = await proc.wait();
    if (exit.spawnError) throw missingCli(call, exit.spawnError);
    if (stopError) throw withContext(stopError, text, parser);
    if (signal.aborted) throw withContext(abortError(request, timeout), text, parser);
    for (const message of parser.stderrWarnings?.(exit.stderr) ?? []) {
      yield { type: 'notice', level: 'warning', message };
    }
    const outcome = parser.finish(exit);
    if (outcome instanceof RuntimeError) throw withContext(outcome, text, parser);
    yield outcome;
  } finally {
    signal.removeEventListener('abort', stop);
    if (proc && !proc.hasExited) {
      proc.stop();
      await proc.wait().catch(() => undefined);
    }
    parser.dispose?.();
    await Promise.all((call.temp ?? []).map((p) => rm(p, { recursive: true, force: true })));
  }
}

export function abortError(request: RuntimeRequest, timeout: AbortSignal): RuntimeError {
  if (timeout.aborted && !request.signal.aborted) {
    return new RuntimeError('timeout', `timed out after ${Math.round(request.timeoutMs / 1000)}s`);
  }
  const reason: unknown = request.signal.reason;
  return reason instanceof RuntimeError ? reason : new RuntimeError('cancelled', 'cancelled');
}

export function missingCli(
  call: Pick<CliInvocation, 'runtime' | 'bin' | 'install'>,
  error: NodeJS.ErrnoException,
): RuntimeError {
  if (error.code === 'ENOENT') {
    return new RuntimeError('missing_cli', `\`${call.bin}\` was not found (runtime ${call.runtime})`, {
      hint: `install it: ${call.install}`,
    });
  }
  return new RuntimeError('missing_cli', `cannot start \`${call.bin}\`: ${error.code ?? error.message}`, {
    hint: `check that it is executable, or reinstall it: ${call.install}`,
  });
}

/** The error with what the run had streamed so far and its session id. */
export function withContext(error: RuntimeError, text: string, parser: CliParser): RuntimeError {
  const meta = { ...parser.meta(), ...(error.options.meta ?? {}) };
  return new RuntimeError(error.kind, error.message, {
    ...error.options,
    partialOutput: error.options.partialOutput ?? text,
    ...(Object.keys(meta).length ? { meta } : {}),
  });
}

/** The last lines of a CLI's stderr, for a message. */
export function stderrTail(stderr: string, lines = 5, chars = 1000): string {
  const clean = stderr.replace(/\u001b\[[0-9;]*m/g, '').trim();
  const kept = clean.split('\n').slice(-lines).join('\n');
  return kept.length > chars ? kept.slice(-chars) : kept;
}

export function emptyUsage(): Usage {
  return { input_tokens: 0, output_tokens: 0 };
}

export function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
