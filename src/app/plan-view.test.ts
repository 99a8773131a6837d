import { describe, expect, it } from 'vitest';
import { parseNumstat } from './piece-diffs.js';
import { pieceLevels } from './plan-view.js';

const piece = (id: string, ...depends_on: string[]) => ({ id, depends_on });

describe('pieceLevels', () => {
  it('puts each piece one past its deepest dependency', () => {
    const levels = pieceLevels([piece('d', 'b', 'c'), piece('c', 'a'), piece('b', 'a', 'c'), piece('a')]);
    expect(Object.fromEntries(levels)).toEqual({ a: 0, c: 1, b: 2, d: 3 });
  });

  it('counts a dependency the plan lacks, or the piece itself, for nothing', () => {
    expect(Object.fromEntries(pieceLevels([piece('a', 'gone', 'a'), piece('b', 'a', 'a')]))).toEqual({
      a: 0,
      b: 1,
    });
  });

  it('ends on a cycle, and a 200-piece chain, without recursion', () => {
    expect(Object.fromEntries(pieceLevels([piece('a', 'b'), piece('b', 'a'), piece('c')]))).toEqual({
      a: 0,
      b: 0,
      c: 0,
    });
    const chain = Array.from({ length: 200 }, (_, i) => piece(`p${i}`, ...(i > 0 ? [`p${i - 1}`] : [])));
    expect(pieceLevels(chain.reverse()).get('p199')).toBe(199);
  });
});

describe('parseNumstat', () => {
  it('counts files and lines, a binary file with no lines', () => {
    expect(parseNumstat('3\t1\tsrc/a.ts\0' + '-\t-\tlogo.png\0' + '0\t7\told.md\0')).toEqual({
      files: 3,
      insertions: 3,
      deletions: 8,
    });
    expect(parseNumstat('')).toEqual({ files: 0, insertions: 0, deletions: 0 });
  });
});
