import { Transform, type TransformCallback } from 'node:stream';
import { sizeText } from '../core/input-limit.js';

/**
 * The most one JSON-RPC message to `troupe mcp` may hold, in bytes: 1 MiB, room for every
 * argument of a tool at its own limit (troupe-server.ts) even escaped. The SDK's transport
 * closes the server on a line over 10 MiB, so the client waited for an answer that never came.
 */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

/** What a too-large message gets: JSON-RPC's "Invalid Request", with its id when one is found. */
export function tooLargeAnswer(id: string | number | null, bytes: number, max = MAX_MESSAGE_BYTES): string {
  const message = `the message is ${bytes} bytes, over troupe mcp's ${sizeText(max)} limit; nothing was done`;
  return `${JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32600, message } })}\n`;
}

/** How much of each end of a too-large message is kept to find its id. */
const KEPT = 4096;

/**
 * stdin cut into messages (lines) of at most `max` bytes: a line that fits passes on whole; one
 * that does not is dropped as it streams in (only both ends are kept) and `refuse` is told its
 * id (found at either end, null if not) and size. The server goes on with the next line.
 */
export class MessageLimit extends Transform {
  private parts: Buffer[] = [];
  private size = 0;
  private over: { head: string; tail: Buffer; bytes: number } | null = null;

  constructor(
    private readonly refuse: (id: string | number | null, bytes: number) => void,
    private readonly max = MAX_MESSAGE_BYTES,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(10, start);
      this.addToLine(chunk.subarray(start, newline === -1 ? chunk.length : newline));
      if (newline === -1) break;
      this.endLine();
      start = newline + 1;
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.size > 0 || this.over) this.endLine();
    done();
  }

  private addToLine(part: Buffer): void {
    if (this.over) {
      this.over.bytes += part.length;
      this.over.tail = Buffer.concat([this.over.tail, part]).subarray(-KEPT);
    } else if (this.size + part.length > this.max) {
      const line = Buffer.concat([...this.parts, part]);
      this.over = {
        head: line.subarray(0, KEPT).toString('utf8'),
        tail: line.subarray(-KEPT),
        bytes: line.length,
      };
      this.parts = [];
      this.size = 0;
    } else {
      this.parts.push(part);
      this.size += part.length;
    }
  }

  private endLine(): void {
    if (this.over) {
      this.refuse(messageId(this.over.head, this.over.tail.toString('utf8')), this.over.bytes);
      this.over = null;
      return;
    }
    this.push(Buffer.concat([...this.parts, Buffer.from('\n')]));
    this.parts = [];
    this.size = 0;
  }
}

const ID = String.raw`"id"\s*:\s*(-?\d+|"[^"\\]{0,200}")`;
const PAIR = String.raw`"(?:jsonrpc|method)"\s*:\s*"[^"\\]*"`;
/** The id among the first members: `{"jsonrpc":"2.0","id":7,"method":…` */
const ID_FIRST = new RegExp(String.raw`^\s*\{\s*(?:${PAIR}\s*,\s*)*${ID}`);
/** The id among the last members, as the SDK writes a request: `…,"jsonrpc":"2.0","id":7}` */
const ID_LAST = new RegExp(String.raw`${ID}\s*(?:,\s*${PAIR}\s*)*\}\s*$`);

/** A message's id, read from its ends only (a top-level member there), or null. */
export function messageId(head: string, tail: string): string | number | null {
  const found = ID_FIRST.exec(head) ?? ID_LAST.exec(tail);
  return found ? (JSON.parse(found[1]!) as string | number) : null;
}
