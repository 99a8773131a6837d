import { describe, expect, it } from 'vitest';
import { DEFAULT_GATE_SYSTEM_PROMPT, gateUserMessage, parseGateDecision } from './gate-decision.js';

describe('DEFAULT_GATE_SYSTEM_PROMPT', () => {
  it("is aqm's instruction to answer in JSON", () => {
    expect(DEFAULT_GATE_SYSTEM_PROMPT).toContain('You are a quality gate evaluator.');
    expect(DEFAULT_GATE_SYSTEM_PROMPT).toContain(
      '{"decision": "approved" or "rejected", "reason": "basis for the decision"}',
    );
  });
});

describe('gateUserMessage', () => {
  it('puts the rendered gate prompt and a blank line before the output', () => {
    expect(gateUserMessage('Check tests exist.', 'the code')).toBe(
      'Check tests exist.\n\nAgent output:\nthe code',
    );
  });

  it('is only the output without a prompt', () => {
    expect(gateUserMessage('', 'the code')).toBe('Agent output:\nthe code');
  });
});

describe('parseGateDecision', () => {
  it('reads the decision and reason from JSON, ignoring case', () => {
    expect(parseGateDecision('{"decision": "Approved", "reason": "good"}')).toEqual({
      decision: 'approved',
      reason: 'good',
    });
  });

  it('finds JSON in prose and accepts nested objects', () => {
    expect(parseGateDecision('Here: {"decision": "rejected", "reason": "missing tests"} end.')).toEqual({
      decision: 'rejected',
      reason: 'missing tests',
    });
    expect(parseGateDecision('{"decision": "approved", "reason": "good", "details": {"score": 95}}')).toEqual(
      {
        decision: 'approved',
        reason: 'good',
      },
    );
  });

  it('gives an empty reason when there is none, and text for a reason that is not a string', () => {
    expect(parseGateDecision('{"decision": "approved"}')).toEqual({ decision: 'approved', reason: '' });
    expect(parseGateDecision('{"decision": "approved", "reason": null}')).toEqual({
      decision: 'approved',
      reason: '',
    });
    expect(parseGateDecision('{"decision": "rejected", "reason": ["a", "b"]}')).toEqual({
      decision: 'rejected',
      reason: '["a","b"]',
    });
  });

  it('uses only the first balanced object, then falls back to words', () => {
    expect(parseGateDecision('{"score": 3} then {"decision": "rejected", "reason": "r"}')).toEqual({
      decision: 'rejected',
      reason: '{"score": 3} then {"decision": "rejected", "reason": "r"}',
    });
    expect(parseGateDecision('{"decision": "maybe"} approve')).toEqual({
      decision: 'approved',
      reason: '{"decision": "maybe"} approve',
    });
  });

  it('reads "not approve" as a rejection before looking for "approve"', () => {
    expect(parseGateDecision('This is not approved because it has issues')).toEqual({
      decision: 'rejected',
      reason: 'This is not approved because it has issues',
    });
    expect(parseGateDecision('I do NOT  approve of this output')).toMatchObject({ decision: 'rejected' });
  });

  it('reads approve(d) and reject(ed) as whole words, trimming the reason', () => {
    expect(parseGateDecision('  The output is approved, looks great\n')).toEqual({
      decision: 'approved',
      reason: 'The output is approved, looks great',
    });
    expect(parseGateDecision('I reject this.')).toMatchObject({ decision: 'rejected' });
    expect(parseGateDecision('disapproved')).toMatchObject({ reason: 'Unable to determine: disapproved' });
  });

  it('rejects what it cannot read, quoting the first 200 characters', () => {
    const text = 'x'.repeat(250);
    expect(parseGateDecision(text)).toEqual({
      decision: 'rejected',
      reason: `Unable to determine: ${'x'.repeat(200)}`,
    });
    expect(parseGateDecision('')).toEqual({ decision: 'rejected', reason: 'Unable to determine: ' });
  });
});
