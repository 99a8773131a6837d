import { type Runtime, RuntimeError, type RuntimeRequest } from '../../core/runtime.js';

/** Small pieces the executor uses: not about planning, not about any one port. */

/** Thrown inside the executor when a stop was asked for (the task goes on elsewhere, later). */
export class StopRequested extends Error {}

/**
 * `resume: true`: the CLI session the agent's latest call left, unless that call found its
 * session gone (then the next call starts a new one).
 */
export function resumableSession(
  previous: ReadonlyArray<Record<string, string | number | boolean>>,
): string | null {
  const last = previous.at(-1);
  if (!last || last.error_kind === 'session_not_found') return null;
  for (let i = previous.length - 1; i >= 0; i--) {
    const id = previous[i]?.session_id;
    if (typeof id === 'string' && id) return id;
  }
  return null;
}

/** Streamed text, committed as stage_output events at most every flushMs. */
export class OutputBuffer {
  all = '';
  private pending = '';
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly flush: (text: string) => void,
    private readonly flushMs = 250,
  ) {}

  add(text: string): void {
    this.all += text;
    this.pending += text;
    this.timer ??= setTimeout(() => this.drain(), this.flushMs);
  }

  /** The completion event carries the whole output, so what is still pending is not flushed. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending = '';
  }

  private drain(): void {
    this.timer = null;
    if (!this.pending) return;
    const text = this.pending;
    this.pending = '';
    try {
      this.flush(text);
    } catch {
      // the task ended under us (cancelled); the stage's own commit reports it
    }
  }
}

export function asRuntimeError(error: unknown): RuntimeError {
  if (error instanceof RuntimeError) return error;
  return new RuntimeError('crashed', error instanceof Error ? error.message : String(error));
}

export function timedOut(ms: number): RuntimeError {
  return new RuntimeError('timeout', `timed out after ${Math.round(ms / 1000)}s`);
}

export function sleepUntil(iso: string, signal: AbortSignal): Promise<void> {
  const until = Date.parse(iso);
  if (until - Date.now() <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout;
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    // Timers run on the monotonic clock and may fire a millisecond before the wall clock reaches
    // `until`; a stage woken then would find its provider still closed and wait all over again.
    const wake = () => {
      const ms = until - Date.now();
      if (ms > 0) timer = setTimeout(wake, ms);
      else {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }
    };
    signal.addEventListener('abort', onAbort, { once: true });
    timer = setTimeout(wake, until - Date.now());
  });
}

/**
 * When to try a limited provider again: its own reset time when that is still ahead (however far:
 * a reset days away is waited for, and said so); otherwise (none given, unparseable, or already
 * past) a backoff that doubles with each limit the stage has met, from 30 s up to 30 min.
 */
export function limitResetTime(given: Date | undefined, previousLimits: number, now: Date): Date {
  if (given && given.getTime() > now.getTime()) return given;
  return new Date(now.getTime() + Math.min(30_000 * 2 ** previousLimits, 30 * 60_000));
}

/**
 * Runs one runtime call under its request's timeout, streaming text to `onText` and the
 * runtime's warnings to `onWarning`; `task` aborts it (the task was cancelled or its run stopped).
 */
export async function invokeRuntime(
  task: AbortSignal,
  runtime: Runtime,
  request: RuntimeRequest,
  onText: (text: string) => void,
  onWarning: (message: string) => void = () => {},
) {
  // one controller and one timer per call: cheaper than AbortSignal.timeout + AbortSignal.any
  const call = new AbortController();
  let timedOutNow = false;
  const timer = setTimeout(() => {
    timedOutNow = true;
    call.abort(timedOut(request.timeoutMs));
  }, request.timeoutMs);
  const cancel = () => call.abort(new RuntimeError('cancelled', 'task cancelled'));
  task.addEventListener('abort', cancel, { once: true });
  try {
    for await (const event of runtime.run({ ...request, signal: call.signal })) {
      if (event.type === 'text') onText(event.text);
      else if (event.type === 'notice' && event.level === 'warning') onWarning(event.message);
      else if (event.type === 'result') return event;
      if (call.signal.aborted) break;
    }
  } catch (error) {
    if (timedOutNow) throw timedOut(request.timeoutMs);
    throw error;
  } finally {
    clearTimeout(timer);
    task.removeEventListener('abort', cancel);
  }
  if (timedOutNow) throw timedOut(request.timeoutMs);
  if (task.aborted) throw new RuntimeError('cancelled', 'cancelled');
  throw new RuntimeError('crashed', `runtime ${runtime.name} ended without a result`);
}
