import { describe, expect, it } from 'vitest';
import { parseTierAdvice } from './tier-router.js';

describe('parseTierAdvice', () => {
  const tiers = ['fast', 'deep'];
  it('reads TIER: and REASON: lines', () => {
    expect(parseTierAdvice('TIER: fast\nREASON: a one-line typo fix', tiers)).toEqual({
      tier: 'fast',
      reason: 'a one-line typo fix',
    });
    expect(parseTierAdvice('  tier: deep\n', tiers)).toEqual({ tier: 'deep', reason: 'no reason given' });
  });
  it('takes a tier named in free text, and says so when there is none', () => {
    expect(parseTierAdvice('I would go with deep here.', tiers)).toMatchObject({ tier: 'deep' });
    expect(parseTierAdvice('TIER: huge', tiers)).toEqual({ error: 'no tier in its answer "TIER: huge"' });
  });
});
