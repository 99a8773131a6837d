import { StringDecoder } from 'node:string_decoder';

/**
 * Splits a byte stream into lines without copying more than it must: the CLIs write one JSON
 * object a line, and a long run can produce hundreds of megabytes of them.
 */
export class LineSplitter {
  // decoding a whole chunk at once and splitting the string is about twice as fast as
  // decoding line by line; the decoder keeps a character cut between chunks whole
  private readonly decoder = new StringDecoder('utf8');
  private rest = '';

  /** The complete lines in `chunk` (and what was left from the last one), without `\n` or `\r\n`. */
  push(chunk: Buffer): string[] {
    const decoded = this.decoder.write(chunk);
    // a long line arriving in pieces is joined once, when its end comes
    if (decoded.indexOf('\n') === -1) {
      this.rest += decoded;
      return [];
    }
    const text = this.rest + decoded;
    const lines = text.split('\n');
    this.rest = lines.pop() ?? '';
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.charCodeAt(line.length - 1) === 13) lines[i] = line.slice(0, -1);
    }
    return lines;
  }

  /** The last line, when the stream did not end with a newline. */
  end(): string[] {
    const rest = (this.rest + this.decoder.end()).replace(/\r$/, '');
    this.rest = '';
    return rest ? [rest] : [];
  }
}

/** A line parsed as a JSON object, or undefined for anything else (banners, stack traces, junk). */
export function parseJsonLine(line: string): Record<string, unknown> | undefined {
  const first = line.charCodeAt(0);
  if (first !== 123 /* { */) {
    const trimmed = line.trimStart();
    if (!trimmed.startsWith('{')) return undefined;
    line = trimmed;
  }
  try {
    const value: unknown = JSON.parse(line);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
