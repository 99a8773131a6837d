import { describe, expect, it } from 'vitest';
import { braceSpans, evaluateCondition, extractFields, parseCondition, parseObject } from './conditions.js';

describe('extractFields', () => {
  it('reads `key: value` lines with lower-cased keys and typed values', () => {
    expect(
      extractFields('Severity: Critical\nscore: 85\nratio: -0.5\nblocked: TRUE\nnote: see below'),
    ).toEqual({
      severity: 'Critical',
      score: 85,
      ratio: -0.5,
      blocked: true,
      note: 'see below',
    });
  });

  it('allows markdown bold, bullets, headings, quotes and backticks', () => {
    expect(
      extractFields(
        '- **Severity**: **high**\n* **Owner:** `ops`\n### Status: "done"\n> result.score: 7\n  indented_key: x',
      ),
    ).toEqual({ severity: 'high', owner: 'ops', status: 'done', 'result.score': 7, indented_key: 'x' });
  });

  it('skips lines without a value or a key, and a later line wins', () => {
    expect(extractFields('Summary:\n1st: no\nplain line\nlevel: low\nlevel: high')).toEqual({
      level: 'high',
    });
  });

  it('reads the last JSON object, fenced or bare, flattening nested keys; JSON wins over lines', () => {
    const output = [
      'severity: low',
      '{"severity": "ignored, not the last object"}',
      '```json',
      '{"Severity": "critical", "result": {"Score": 92, "passed": true, "tags": ["a"], "owner": null}}',
      '```',
    ].join('\n');
    expect(extractFields(output)).toEqual({
      severity: 'critical',
      'result.score': 92,
      'result.passed': true,
    });
  });

  it('finds the last object even after prose braces, and ignores braces inside strings', () => {
    expect(extractFields('use {braces} freely {"msg": "a } inside", "ok": true} trailing }')).toEqual({
      msg: 'a } inside',
      ok: true,
    });
    expect(extractFields('{ not json {"inner": 1} }')).toEqual({ inner: 1 });
    expect(extractFields('[1, 2] and {}')).toEqual({});
  });
});

describe('braceSpans', () => {
  it('pairs braces in one pass, in order of their end', () => {
    expect(braceSpans('{a{b}}{c}')).toEqual([
      { start: 2, end: 5 },
      { start: 0, end: 6 },
      { start: 6, end: 9 },
    ]);
  });

  it('ignores stray closing braces and quotes outside braces, escapes inside strings', () => {
    expect(braceSpans('} "x" {"a": "\\"}"}')).toEqual([{ start: 6, end: 18 }]);
  });

  it('ends a string at a newline, so an unbalanced quote costs one line', () => {
    expect(braceSpans('{ he said "hi\n}')).toEqual([{ start: 0, end: 15 }]);
  });
});

describe('parseObject', () => {
  it('is the object, or null for other JSON and non-JSON', () => {
    expect(parseObject('{"a": 1}')).toEqual({ a: 1 });
    expect(parseObject('[1]')).toBeNull();
    expect(parseObject('{nope}')).toBeNull();
  });
});

describe('parseCondition', () => {
  it.each([
    'severity == critical',
    "severity != 'low'",
    'score >= 80 && score < 100',
    'a > 1 || b <= 2',
    'level in [high, "critical", 3]',
    'not blocked and (ready or forced)',
    '!blocked',
    'result.score > -1',
    'result["score"] > +1',
    'approved == true',
    'always',
  ])('accepts %s', (expr) => {
    expect(parseCondition(expr)).toEqual({ ok: true });
  });

  it.each([
    ['', 'empty condition'],
    ['  ', 'empty condition'],
    [
      'status == in-progress',
      "unsupported operator '-' (quote values that contain '-': status == 'in-progress')",
    ],
    ['a + b', "unsupported operator '+'"],
    ['a == b * 2', "unsupported operator '*'"],
    ['a = b', 'Unexpected "=" at character 2'],
    ['a b', 'expected one expression; join conditions with and / or'],
    ['f(x)', 'unsupported expression (CallExpression)'],
    ['a ? b : c', 'unsupported expression (ConditionalExpression)'],
    ['level in high', "'in' needs a list: field in [a, b]"],
    ['level in [a, , b]', 'empty element in a list'],
    ['x == null', 'unsupported value null'],
    ['x == -y', "unsupported operator '-' in a value"],
    ['x == (a == b)', "expected a field name or a value, got '==' expression"],
    ['[a] == b', 'expected a field name or a value, got ArrayExpression'],
    ['a[b] == c', 'expected a field name, got MemberExpression'],
    ['f().x == c', 'expected a field name, got CallExpression'],
    ['~a', "unsupported operator '~' in a value"],
  ])('rejects %j: %s', (expr, message) => {
    expect(parseCondition(expr)).toEqual({ ok: false, message });
  });
});

describe('evaluateCondition', () => {
  it('routes on the field, not the word (aqm matched "NOT critical")', () => {
    expect(
      evaluateCondition('severity == critical', 'Severity: not critical\nThe word critical appears.'),
    ).toBe(false);
    expect(evaluateCondition('severity == critical', 'severity: CRITICAL')).toBe(true);
    expect(evaluateCondition('severity == critical', 'The issue is critical.')).toBe(false);
  });

  it('compares numbers numerically when both sides are numbers, strings case-insensitively otherwise', () => {
    expect(evaluateCondition('score >= 80', 'score: 85')).toBe(true);
    expect(evaluateCondition('score > 9', 'score: 10')).toBe(true);
    expect(evaluateCondition('score == 85', '{"score": "85.0"}')).toBe(true);
    expect(evaluateCondition('coverage < 80', 'coverage: 75%')).toBe(true);
    expect(evaluateCondition('grade <= b', 'grade: A')).toBe(true);
    expect(evaluateCondition('grade > b', 'grade: A')).toBe(false);
    expect(evaluateCondition('name != "Alice"', 'name: alice')).toBe(false);
    expect(evaluateCondition('approved == true', '{"approved": true}')).toBe(true);
    expect(evaluateCondition('approved == "TRUE"', 'approved: true')).toBe(true);
  });

  it('takes a value word as that word, even when the output has a field of that name', () => {
    expect(evaluateCondition('status == approved', 'status: approved\nApproved: yes')).toBe(true);
    expect(evaluateCondition('status == approved', 'status: pending\napproved: pending')).toBe(false);
  });

  it('supports in [..] with words, strings and numbers', () => {
    expect(evaluateCondition('level in [high, critical]', 'Level: high — escalate')).toBe(false);
    expect(evaluateCondition('level in [high, critical]', 'Level: High')).toBe(true);
    expect(evaluateCondition('level in [high, critical]', 'This is noncritical.')).toBe(false);
    expect(evaluateCondition('priority in [1, 2]', 'priority: 2')).toBe(true);
  });

  it('reads nested JSON fields by dotted name or bracket', () => {
    const output = '```json\n{"result": {"score": 92, "verdict": "pass"}}\n```';
    expect(evaluateCondition('result.score > 90 and result["verdict"] == pass', output)).toBe(true);
  });

  it('combines with && || and or not !, with parentheses', () => {
    const output = 'ready: yes\nblocked: false\nforced: no';
    expect(evaluateCondition('ready && !blocked', output)).toBe(true);
    expect(evaluateCondition('ready and not blocked', output)).toBe(true);
    expect(evaluateCondition('blocked || forced', output)).toBe(false);
    expect(evaluateCondition('not (blocked or forced)', output)).toBe(true);
    expect(evaluateCondition('true', '')).toBe(true);
    expect(evaluateCondition('0', '')).toBe(false);
    expect(evaluateCondition('-1', '')).toBe(true);
  });

  it('binds not looser than a comparison, as Python does', () => {
    expect(evaluateCondition('not severity == critical', 'severity: low')).toBe(true);
    expect(evaluateCondition('not severity == critical', 'severity: critical')).toBe(false);
    expect(evaluateCondition('!level in [low]', 'level: high')).toBe(true);
  });

  it('is false, never an error, when a field it reads is missing', () => {
    expect(evaluateCondition('severity == critical', 'nothing here')).toBe(false);
    expect(evaluateCondition('severity != critical', 'nothing here')).toBe(false);
    expect(evaluateCondition('level in [a]', 'nothing here')).toBe(false);
    expect(evaluateCondition('blocked', 'nothing here')).toBe(false);
    expect(evaluateCondition('not blocked', 'nothing here')).toBe(false);
    expect(evaluateCondition('missing == x and ok', 'ok: true')).toBe(false);
  });

  it('lets a known answer win over a missing field in and / or', () => {
    expect(evaluateCondition('missing == x or ok', 'ok: true')).toBe(true);
    expect(evaluateCondition('missing == x and ok', 'ok: false')).toBe(false);
    expect(evaluateCondition('not (missing == x and ok)', 'ok: false')).toBe(true);
    expect(evaluateCondition('missing == x or ok', 'ok: false')).toBe(false);
  });

  it('compares a literal on the left with a field on the right', () => {
    expect(evaluateCondition('"critical" == severity', 'severity: critical')).toBe(true);
    expect(evaluateCondition('5 < score', 'score: 6')).toBe(true);
  });

  it('is false for an expression that does not parse', () => {
    expect(evaluateCondition('status == in-progress', 'status: in-progress')).toBe(false);
    expect(evaluateCondition("status == 'in-progress'", 'status: in-progress')).toBe(true);
  });

  it('treats empty, false, no and 0 strings as falsy', () => {
    expect(evaluateCondition('flag', 'flag: no')).toBe(false);
    expect(evaluateCondition('flag', 'flag: 0')).toBe(false);
    expect(evaluateCondition('flag', 'flag: "yes"')).toBe(true);
    expect(evaluateCondition('flag', '{"flag": ""}')).toBe(false);
    expect(evaluateCondition('flag', '{"flag": "False"}')).toBe(false);
  });
});
