import { describe, expect, it } from 'vitest';
import { messageOf } from './errors.js';

describe('messageOf', () => {
  it("is an Error's message, or what was thrown as a string", () => {
    expect(messageOf(new RangeError('too big'))).toBe('too big');
    expect(messageOf('plain')).toBe('plain');
    expect(messageOf(undefined)).toBe('undefined');
  });
});
