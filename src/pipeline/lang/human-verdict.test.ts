import { describe, expect, it } from 'vitest';
import { parseVerdict } from './human-verdict.js';

describe('parseVerdict', () => {
  it('reads yes and no words, with the rest as the reason', () => {
    expect(parseVerdict('approved: LGTM, deploy to staging')).toEqual({
      decision: 'approved',
      reason: 'LGTM, deploy to staging',
    });
    expect(parseVerdict('lgtm')).toEqual({ decision: 'approved', reason: '' });
    expect(parseVerdict('  Reject: too long ')).toEqual({ decision: 'rejected', reason: 'too long' });
    expect(parseVerdict('n')).toEqual({ decision: 'rejected', reason: '' });
  });

  it('is null for anything else, including words that only start like a verdict', () => {
    expect(parseVerdict('wait, not yet')).toBeNull();
    expect(parseVerdict('nothing to add')).toBeNull();
    expect(parseVerdict('okay then')).toBeNull();
  });
});
