import { describe, expect, it } from 'vitest';
import { terminalSafe, terminalSafeLines } from './terminal-text.js';

describe('terminalSafe', () => {
  it('removes CSI and OSC sequences whole, and folds control characters and newlines', () => {
    expect(terminalSafe('\u001b[2J\u001b]0;title-pwn\u0007clean')).toBe('clean');
    expect(terminalSafe('\u001b]8;;https://evil\u001b\\link\u001b]8;;\u001b\\')).toBe('link');
    expect(terminalSafe('one\ntroupe: Fake: line\r\n\ttwo')).toBe('one troupe: Fake: line two');
    expect(terminalSafe('a\u009b31mb\u0000c\u2028d')).toBe('ab c d');
    expect(terminalSafe('a review pipeline — ünïcode')).toBe('a review pipeline — ünïcode');
  });

  it('keeps the lines of a message and their indentation', () => {
    expect(terminalSafeLines('a.yaml:3:3: invalid key `\u001b[2Jx\ry`\n  hint: fix it')).toBe(
      'a.yaml:3:3: invalid key `x y`\n  hint: fix it',
    );
  });
});
