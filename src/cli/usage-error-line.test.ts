import { describe, expect, it } from 'vitest';
import { usageErrorLines } from './usage-error-line.js';

describe('usageErrorLines', () => {
  it("turns commander's message into troupe's line and a hint", () => {
    expect(usageErrorLines("error: unknown option '--bogus'", 'list')).toBe(
      "troupe: unknown option '--bogus'\n  hint: `troupe list --help` shows its usage\n",
    );
    expect(usageErrorLines("error: unknown command 'lst'\n(Did you mean list?)", null)).toBe(
      "troupe: unknown command 'lst' (did you mean list?)\n  hint: `troupe --help` lists the commands\n",
    );
  });
});
