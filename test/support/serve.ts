import { execa, type ResultPromise } from 'execa';
import { bin } from './troupe.js';

/** A real `troupe serve` on a free loopback port, in a project directory. */
export interface Served {
  url: string;
  process: ResultPromise;
  stdout: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | undefined>;
}

/**
 * `troupe serve` on a free port. Unless the test speaks of tokens itself (`--token`, TROUPE_TOKEN,
 * or `projectToken` for serve's own default), it runs with `--no-token`, so the test's requests
 * need none; the tests of the token itself are in server-api.test.ts.
 */
export async function serve(
  cwd: string,
  args: string[] = [],
  env: Record<string, string> = {},
  options: { projectToken?: boolean } = {},
): Promise<Served> {
  const ownToken = options.projectToken || args.some((a) => a.startsWith('--token')) || 'TROUPE_TOKEN' in env;
  const child = execa('node', [bin, 'serve', '--port', '0', ...(ownToken ? [] : ['--no-token']), ...args], {
    cwd,
    reject: false,
    env: { NO_COLOR: '1', ...env },
    stdin: 'ignore',
    buffer: true,
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 10_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.then((r) => reject(new Error(`serve exited (${r.exitCode}): ${String(r.stderr)}`)), reject);
  });
  return {
    url,
    process: child,
    stdout: () => out,
    async stop(signal = 'SIGTERM') {
      child.kill(signal);
      return (await child).exitCode;
    },
  };
}

export interface SseFrame {
  id: string | null;
  event: string;
  data: unknown;
}

/**
 * Reads an SSE stream until `until` says stop, the stream ends, or `maxFrames`; aborts the
 * request then (a browser that goes away).
 */
export async function readSse(
  url: string,
  options: {
    lastEventId?: string;
    until?: (frame: SseFrame) => boolean;
    maxFrames?: number;
    headers?: Record<string, string>;
  } = {},
): Promise<{ status: number; frames: SseFrame[] }> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { ...(options.lastEventId ? { 'Last-Event-ID': options.lastEventId } : {}), ...options.headers },
    signal: controller.signal,
  });
  const frames: SseFrame[] = [];
  if (response.status !== 200 || !response.body) return { status: response.status, frames };
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
        const frame = parseFrame(block);
        if (!frame) continue;
        frames.push(frame);
        if (options.until?.(frame) || (options.maxFrames && frames.length >= options.maxFrames)) {
          controller.abort();
          return { status: response.status, frames };
        }
      }
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  }
  return { status: response.status, frames };
}

/** One frame's text (without its blank line); null for a comment or a frame with no data. */
export function parseFrame(block: string): SseFrame | null {
  let id: string | null = null;
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':') || line.startsWith('retry:')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return null;
  return { id, event, data: JSON.parse(data.join('\n')) };
}
