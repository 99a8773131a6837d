import { describe, expect, it } from 'vitest';
import { LineSplitter, parseJsonLine } from './jsonl.js';

describe('LineSplitter', () => {
  it('joins lines cut between chunks, multi-byte characters included, and drops \\r', () => {
    const bytes = Buffer.from('{"a":"é·’"}\r\nsecond\nthird');
    const splitter = new LineSplitter();
    const lines: string[] = [];
    for (let i = 0; i < bytes.length; i++) lines.push(...splitter.push(bytes.subarray(i, i + 1)));
    lines.push(...splitter.end());
    expect(lines).toEqual(['{"a":"é·’"}', 'second', 'third']);
  });

  it('parses only JSON objects', () => {
    expect(parseJsonLine('{"type":"x"}')).toEqual({ type: 'x' });
    for (const junk of ['', 'null', '[1]', '{"type":', 'Reading additional input from stdin...']) {
      expect(parseJsonLine(junk)).toBeUndefined();
    }
  });
});
