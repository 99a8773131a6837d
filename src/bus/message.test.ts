import { describe, expect, it } from 'vitest';
import { MessageInvalidError } from './errors.js';
import { formatMessage, type Header, MAX_MESSAGE_BYTES, parseMessage } from './message.js';

const header: Header = {
  schema: 1,
  id: '2026-08-22T11-12-13.123Z_pid4242_9f3a01bc',
  from: 'claude',
  to: ['codex'],
  thread: 'p2p/claude__codex',
  created: '2026-08-22T11:12:13.123456789Z',
};

function reason(bytes: string | Buffer): string {
  try {
    parseMessage(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes));
  } catch (error) {
    if (error instanceof MessageInvalidError) return `${error.reason}: ${error.message}`;
    throw error;
  }
  return 'ok';
}

describe('formatMessage', () => {
  it('writes the bytes AMQ writes: ---json, Go-indented header in struct order, ---, body + newline', () => {
    const bytes = formatMessage(
      { ...header, subject: 'Hi', priority: 'normal', kind: 'question', labels: ['a'], refs: [] },
      'body',
    );
    expect(bytes.toString()).toBe(
      [
        '---json',
        '{',
        '  "schema": 1,',
        '  "id": "2026-08-22T11-12-13.123Z_pid4242_9f3a01bc",',
        '  "from": "claude",',
        '  "to": [',
        '    "codex"',
        '  ],',
        '  "thread": "p2p/claude__codex",',
        '  "subject": "Hi",',
        '  "created": "2026-08-22T11:12:13.123456789Z",',
        '  "priority": "normal",',
        '  "kind": "question",',
        '  "labels": [',
        '    "a"',
        '  ]',
        '}',
        '---',
        'body',
        '',
      ].join('\n'),
    );
  });

  it('escapes <, >, & and U+2028/9 like Go, and sorts context keys', () => {
    const text = formatMessage(
      { ...header, subject: 'a<b>&c\u2028', context: { z: 1, a: { y: 2, b: 3 } } },
      '',
    ).toString();
    expect(text).toContain('"subject": "a\\u003cb\\u003e\\u0026c\\u2028"');
    expect(text.indexOf('"a"')).toBeLessThan(text.indexOf('"z"'));
    expect(text.indexOf('"b"')).toBeLessThan(text.indexOf('"y"'));
    expect(text.endsWith('---\n')).toBe(true);
  });

  it('indents nested context maps and lists as MarshalIndent does, and every later field after them', () => {
    const text = formatMessage(
      {
        ...header,
        context: { z: [], k: [1, 'two', { b: null }] },
        reply_to: 'claude@collab',
        from_project: 'app',
      },
      'x',
    ).toString();
    expect(text).toContain(
      [
        '  "created": "2026-08-22T11:12:13.123456789Z",',
        '  "context": {',
        '    "k": [',
        '      1,',
        '      "two",',
        '      {',
        '        "b": null',
        '      }',
        '    ],',
        '    "z": []',
        '  },',
        '  "reply_to": "claude@collab",',
        '  "from_project": "app"',
        '}',
        '---',
        'x',
        '',
      ].join('\n'),
    );
  });

  it('fills schema 0 with 1, keeps a body that already ends in a newline as is', () => {
    const text = formatMessage({ ...header, schema: 0 }, 'x\n').toString();
    expect(text).toContain('"schema": 1');
    expect(text.endsWith('---\nx\n')).toBe(true);
  });
});

describe('parseMessage', () => {
  it('round-trips what formatMessage writes', () => {
    const full: Header = {
      ...header,
      subject: 'S',
      refs: ['r1'],
      priority: 'urgent',
      kind: 'todo',
      labels: ['l1', 'l2'],
      context: { k: [1, 'two'] },
      reply_to: 'claude@collab',
      reply_project: 'app',
      from_project: 'app',
    };
    const parsed = parseMessage(formatMessage(full, 'hello'));
    expect(parsed.header).toEqual(full);
    expect(parsed.body).toBe('hello\n');
    expect(formatMessage(parsed.header, parsed.body).equals(formatMessage(full, 'hello'))).toBe(true);
  });

  it('normalises CRLF and accepts blank lines before the closing ---', () => {
    const m = parseMessage(
      Buffer.from(`---json\r\n${JSON.stringify(header)}\r\n\r\n---\r\nline1\r\nline2\r\n`),
    );
    expect(m.header.id).toBe(header.id);
    expect(m.body).toBe('line1\nline2\n');
  });

  it('matches keys case-insensitively and ignores unknown keys and nulls, as Go does', () => {
    const m = parseMessage(
      Buffer.from(
        `---json\n${JSON.stringify({ ...header, From: 'codex', from: undefined, extra: 1, subject: null })}\n---\n`,
      ),
    );
    expect(m.header.from).toBe('codex');
    expect(m.header.subject).toBeUndefined();
    expect('extra' in m.header).toBe(false);
  });

  it('rejects a missing start, a missing end and corrupt JSON', () => {
    expect(reason('{"a":1}\n---\n')).toBe('parse_error: missing frontmatter start');
    expect(reason(`---json\n${JSON.stringify(header)}\n`)).toBe('parse_error: missing frontmatter end');
    expect(reason('---json\n{"schema":1,\n---\nbody')).toMatch(/^parse_error: invalid header JSON/);
    expect(reason('---json\n[1]\n---\n')).toMatch(/^parse_error: json: cannot unmarshal array/);
  });

  it('rejects wrong types: to as a string, context as an array, schema as a string', () => {
    const bad = (patch: object) => reason(`---json\n${JSON.stringify({ ...header, ...patch })}\n---\n`);
    expect(bad({ to: 'codex' })).toBe(
      'parse_error: json: cannot unmarshal string into Go struct field Header.to of type []string',
    );
    expect(bad({ context: [] })).toMatch(/Header.context/);
    expect(bad({ schema: '1' })).toMatch(/Header.schema of type int/);
    expect(bad({ labels: [1] })).toMatch(/Header.labels/);
  });

  it('allows exactly 10 MiB and refuses one byte more', () => {
    const head = formatMessage(header, '');
    const exact = Buffer.concat([head, Buffer.alloc(MAX_MESSAGE_BYTES - head.length, 'a')]);
    expect(reason(exact)).toBe('ok');
    expect(reason(Buffer.concat([exact, Buffer.from('a')]))).toMatch(/over the 10 MiB limit/);
  });
});
