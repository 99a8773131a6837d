import { describe, expect, it } from 'vitest';
import { printable, printableLines } from './printable.js';

describe('printable (text from others on a terminal)', () => {
  it('removes escape sequences whole: colours, screen clears, window titles, hyperlinks', () => {
    expect(printable('\u001b[2J\u001b]0;title-pwn\u0007ok \u001b[31mred\u001b[0m')).toBe('ok red');
    expect(printable('\u001b]8;;https://evil.example\u001b\\click\u001b]8;;\u001b\\')).toBe('click');
    expect(printable('\u009b2Jx \u001bcy')).toBe('x y');
    expect(printable('a\u001b]0;never ends')).toBe('a');
  });

  it('folds line breaks and other control characters, so no line can be forged', () => {
    expect(printable('hello\nFake: approved\r\n---json')).toBe('hello Fake: approved ---json');
    expect(printable('a\u0000b\u0007c\u007fd\u0085e\u2028f')).toBe('a b c d e f');
    expect(printable('  plain text, ünïcode 👋  ')).toBe('plain text, ünïcode 👋');
  });

  it('keeps the lines of a message and their indentation', () => {
    expect(printableLines('a.yaml:3:3: invalid key `\u001b[2Jx\ry`\n  hint: fix it')).toBe(
      'a.yaml:3:3: invalid key `x y`\n  hint: fix it',
    );
  });
});
