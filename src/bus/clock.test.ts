import { describe, expect, it } from 'vitest';
import { idStamp, parseRfc3339, rfc3339, rfc3339Nano } from './clock.js';
import { attemptName, newDlqId, newMessageId } from './ids.js';

const ns = BigInt(Date.UTC(2025, 11, 24, 15, 2, 33, 123)) * 1_000_000n;

describe('clock and ids', () => {
  it('prints RFC3339Nano as Go does: fraction trimmed of trailing zeros, none when zero', () => {
    expect(rfc3339Nano(ns + 456_000n)).toBe('2025-12-24T15:02:33.123456Z');
    expect(rfc3339Nano(ns)).toBe('2025-12-24T15:02:33.123Z');
    expect(rfc3339Nano(ns - 123_000_000n)).toBe('2025-12-24T15:02:33Z');
    expect(rfc3339(ns)).toBe('2025-12-24T15:02:33Z');
  });

  it('stays right when calls move between seconds (the formatted second is cached)', () => {
    const next = ns + 1_000_000_000n;
    expect(rfc3339Nano(ns)).toBe('2025-12-24T15:02:33.123Z');
    expect(idStamp(next)).toBe('2025-12-24T15-02-34.123Z');
    expect(rfc3339Nano(next + 5n)).toBe('2025-12-24T15:02:34.123000005Z');
    expect(idStamp(ns)).toBe('2025-12-24T15-02-33.123Z');
    expect(rfc3339(ns - 1n)).toBe('2025-12-24T15:02:33Z');
    expect(rfc3339(ns - 123_000_001n)).toBe('2025-12-24T15:02:32Z');
  });

  it('makes ids with the AMQ shape', () => {
    expect(idStamp(ns)).toBe('2025-12-24T15-02-33.123Z');
    expect(newMessageId(ns)).toMatch(
      new RegExp(`^2025-12-24T15-02-33\\.123Z_pid${process.pid}_[0-9a-f]{8}$`),
    );
    expect(newDlqId()).toMatch(new RegExp(`^dlq_\\d{19}_${process.pid}_[0-9a-f]{12}$`));
    expect(attemptName('x.md')).toMatch(new RegExp(`^\\.x\\.md\\.tmp-\\d+-${process.pid}-[0-9a-f]{12}$`));
  });

  it('parses RFC3339 with or without fraction and offset, and refuses what Go refuses', () => {
    expect(parseRfc3339('2025-12-24T15:02:33.123Z')).toBe(ns);
    expect(parseRfc3339('2025-12-24T17:02:33.123+02:00')).toBe(ns);
    expect(parseRfc3339('2025-12-24T15:02:33Z')).toBe(ns - 123_000_000n);
    for (const bad of [
      '2025-12-24 15:02:33Z',
      '2025-02-30T00:00:00Z',
      '2025-12-24T25:00:00Z',
      'yesterday',
      '2025-12-24T15:02:33',
    ]) {
      expect(parseRfc3339(bad), bad).toBeUndefined();
    }
  });
});
