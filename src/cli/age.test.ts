import { describe, expect, it } from 'vitest';
import { parseAge } from './age.js';

describe('parseAge', () => {
  it('reads weeks, days, hours, minutes and seconds, alone or together', () => {
    expect(parseAge('30d', '--older-than')).toBe(30 * 86_400_000);
    expect(parseAge('12h', '--older-than')).toBe(12 * 3_600_000);
    expect(parseAge('1d12h', '--older-than')).toBe(36 * 3_600_000);
    expect(parseAge('2w', '--older-than')).toBe(14 * 86_400_000);
    expect(parseAge('90s', '--older-than')).toBe(90_000);
  });

  it('refuses anything else with one line naming the flag', () => {
    for (const bad of ['', '30', 'd', '30x', '-1d', '0d', '1.5d', '30d ', ' 30d'])
      expect(() => parseAge(bad, '--older-than')).toThrow(/^invalid --older-than '/);
  });
});
