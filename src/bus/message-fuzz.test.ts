import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BUS_KINDS, BUS_PRIORITIES } from '../core/bus-vocabulary.js';
import { openBus } from './bus.js';
import { MessageInvalidError } from './errors.js';
import { formatMessage, parseMessage } from './message.js';
import { headerProblem } from './validate.js';

/**
 * Property tests of bus messages (issue #18; figures in docs/reliability.md, Bus). A fixed seed,
 * so a failure is the same on every machine; each property's `numRuns` keeps the whole file to
 * a few seconds (the send and drain ones do real fsyncs).
 */
const SEED = 18;

const FIELDS = ['schema', 'id', 'from', 'to', 'thread', 'subject', 'created', 'refs', 'priority', 'kind'];
const MORE_FIELDS = ['labels', 'context', 'reply_to', 'reply_project', 'from_project'];

/** What the format's own syntax and Go's JSON escaping are made of. */
const TRICKY = [
  '\r\n',
  '\r',
  '\n',
  '\n---\n',
  '---json\n',
  '---',
  '<',
  '>',
  '&',
  '\u2028',
  '\u2029',
  '\0',
  '\ufeff',
  '"',
  '\\',
];

/**
 * Any string: any code point (well-formed UTF-16: a lone surrogate has no UTF-8 bytes to keep),
 * with the format's tricky pieces mixed in.
 */
const text = (maxLength = 40) =>
  fc.string({
    unit: fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), fc.constantFrom(...TRICKY)),
    maxLength,
  });

/** A header as a file may hold it: known keys (any case), unknown ones, values of any JSON type. */
const anyHeader = fc.dictionary(
  fc.oneof(
    fc.constantFrom(...FIELDS, ...MORE_FIELDS),
    fc.constantFrom(...FIELDS, ...MORE_FIELDS).map((k) => k.toUpperCase()),
    fc.string(),
  ),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 12 },
);

const frame = (json: string, body: string) => Buffer.from(`---json\n${json}\n---\n${body}`);

/** Bytes a mailbox may find: random, with a `---json` line, or a frame around any header. */
const anyFile = fc.oneof(
  fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)),
  fc.uint8Array({ maxLength: 256 }).map((b) => Buffer.concat([Buffer.from('---json\n'), b])),
  fc.tuple(fc.jsonValue({ maxDepth: 3 }), text()).map(([v, body]) => frame(JSON.stringify(v), body)),
  // a header whose JSON text was damaged: a few characters replaced somewhere
  fc
    .tuple(anyHeader, fc.nat(), fc.string({ minLength: 1, maxLength: 3 }), text())
    .map(([h, at, junk, body]) => {
      const json = JSON.stringify(h, null, 2);
      const i = at % json.length;
      return frame(json.slice(0, i) + junk + json.slice(i + junk.length), body);
    }),
  fc.tuple(anyHeader, text(), fc.boolean()).map(([h, body, crlf]) => {
    const bytes = frame(JSON.stringify(h, null, 2), body);
    return crlf ? Buffer.from(bytes.toString('utf8').replaceAll('\n', '\r\n')) : bytes;
  }),
);

const validHeader = {
  schema: 1,
  id: '2026-12-01T10-00-00.000Z_pid1_00000001',
  from: 'claude',
  to: ['codex'],
  thread: 'p2p/claude__codex',
  created: '2026-12-01T10:00:00Z',
};

/** Files that must be accepted: a valid header with any case of its keys, unknown keys, CRLF lines. */
const validFile = fc
  .tuple(
    fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
    fc.boolean(),
    fc.boolean(),
    text(),
  )
  .map(([extra, upper, crlf, body]) => {
    const known = new Set(FIELDS.concat(MORE_FIELDS));
    const unknown = Object.fromEntries(Object.entries(extra).filter(([k]) => !known.has(k.toLowerCase())));
    const header = Object.fromEntries(
      Object.entries(validHeader).map(([k, v]) => [upper ? k.toUpperCase() : k, v]),
    );
    const bytes = frame(JSON.stringify({ ...unknown, ...header }, null, 2), body);
    return crlf ? Buffer.from(bytes.toString('utf8').replaceAll('\n', '\r\n')) : bytes;
  });

/** Files that must be dead-lettered: each breaks the format or a header rule in a known way. */
const invalidFile = fc.oneof(
  // not a frame at all
  fc
    .uint8Array({ minLength: 1, maxLength: 512 })
    .map((b) => Buffer.from(b))
    .filter((b) => !b.toString('utf8').replaceAll('\r\n', '\n').startsWith('---json\n')),
  // a header's JSON cut short (no prefix of an object's JSON is JSON), the frame whole
  fc.tuple(fc.nat(), text()).map(([at, body]) => {
    const json = JSON.stringify(validHeader, null, 2);
    return frame(json.slice(0, at % json.length), body);
  }),
  // a frame cut before its end
  fc.tuple(text(), fc.nat()).map(([body, cut]) => {
    const whole = frame(JSON.stringify(validHeader, null, 2), body);
    return whole.subarray(0, 8 + (cut % (whole.indexOf('\n---\n') - 7)));
  }),
  // a header that breaks one rule: a sender that is no handle, a time that is none, a bad kind
  fc
    .tuple(
      fc.constantFrom('from', 'created', 'kind', 'thread'),
      fc.string({ minLength: 1 }).filter((s) => /[^a-z0-9_-]/.test(s) && s.trim() === s),
      text(),
    )
    .map(([field, value, body]) =>
      frame(JSON.stringify({ ...validHeader, [field]: field === 'thread' ? ` ${value}` : value }), body),
    ),
);

/** What a caller may send: any subject, body, labels, refs and context, a kind and a priority. */
const sendInput = fc.record(
  {
    subject: text(),
    body: text(200).filter((b) => /\S/.test(b)),
    labels: fc.array(text(12), { maxLength: 4 }),
    refs: fc.array(text(12), { maxLength: 3 }),
    kind: fc.constantFrom(...BUS_KINDS),
    priority: fc.constantFrom(...BUS_PRIORITIES),
    context: fc.dictionary(text(8), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
  },
  { requiredKeys: ['body'] },
);

function newBus() {
  const root = mkdtempSync(join(tmpdir(), 'troupe-fuzz-'));
  const bus = openBus(root);
  bus.init(['claude', 'codex']);
  return { bus, inbox: join(root, 'agents', 'codex', 'inbox') };
}

describe('bus messages, fuzzed (fast-check)', () => {
  it('parsing any bytes throws nothing but MessageInvalidError, and what parses can be validated', () => {
    fc.assert(
      fc.property(anyFile, (bytes) => {
        let parsed: ReturnType<typeof parseMessage>;
        try {
          parsed = parseMessage(bytes);
        } catch (error) {
          if (error instanceof MessageInvalidError) return;
          throw error;
        }
        const { header } = parsed;
        expect(Array.isArray(header.to) && header.to.every((t) => typeof t === 'string')).toBe(true);
        const problem = headerProblem(header, { strict: true, agents: ['claude', 'codex'] });
        expect(problem === undefined || typeof problem === 'string').toBe(true);
      }),
      { seed: SEED, numRuns: 3000 },
    );
  });

  it('a sent message is on disk as AMQ writes it, and reads back byte for byte', () => {
    const { bus, inbox } = newBus();
    fc.assert(
      fc.property(sendInput, (input) => {
        const sent = bus.send({ from: 'claude', to: 'codex', ...input });
        const bytes = readFileSync(join(inbox, 'new', `${sent.id}.md`));
        const { header } = parseMessage(bytes);
        expect(headerProblem(header)).toBeUndefined();
        // the file holds the body as sent, whatever it contains
        expect(formatMessage(header, input.body).equals(bytes)).toBe(true);
        const [item] = bus.drain('codex', { includeBody: true });
        expect(item?.moved_to_cur).toBe(true);
        // and reads back as AMQ's reader gives it: with the final newline the writer adds, CRLF as LF
        const written = input.body.endsWith('\n') ? input.body : `${input.body}\n`;
        expect(item?.body).toBe(written.replaceAll('\r\n', '\n'));
        expect([item?.subject, item?.kind, item?.priority]).toEqual([
          input.subject ?? '',
          input.kind ?? '',
          input.priority ?? (input.kind ? 'normal' : ''),
        ]);
        expect(item?.labels).toEqual(input.labels ?? []);
        expect(item?.refs).toEqual(input.refs ?? []);
        // JSON's own equality: -0 is written 0, as Go writes it
        expect(JSON.stringify(sorted(item?.context ?? {}))).toBe(JSON.stringify(sorted(input.context ?? {})));
        expect(readFileSync(join(inbox, 'cur', `${sent.id}.md`)).equals(bytes)).toBe(true);
      }),
      { seed: SEED, numRuns: 100 },
    );
  });

  it('a drain sorts any file into cur/ or the DLQ (every invalid one there, verbatim), and list never throws', () => {
    const { bus, inbox } = newBus();
    let n = 0;
    const file = fc.oneof(
      invalidFile.map((bytes) => ({ bytes, invalid: true })),
      validFile.map((bytes) => ({ bytes, invalid: false })),
      anyFile.map((bytes) => ({ bytes, invalid: !isValid(bytes) })),
    );
    fc.assert(
      fc.property(file, ({ bytes, invalid }) => {
        const name = `2026-12-01T10-00-00.000Z_pid1_${(++n).toString(16).padStart(8, '0')}.md`;
        writeFileSync(join(inbox, 'new', name), bytes);
        expect(bus.list('codex').items.length).toBe(invalid ? 0 : 1);
        const items = bus.drain('codex', { includeBody: true });
        expect(items.map((i) => [i.moved_to_dlq, i.moved_to_cur])).toEqual([[invalid, !invalid]]);
        expect(readdirSync(join(inbox, 'new'))).toEqual([]);
        if (invalid) {
          expect(readdirSync(join(inbox, 'cur'))).toEqual([]);
          expect(bus.dlqRead('codex', items[0]!.dlq_id!).original.equals(bytes)).toBe(true);
        } else {
          expect(readFileSync(join(inbox, 'cur', name)).equals(bytes)).toBe(true);
          rmSync(join(inbox, 'cur', name));
        }
      }),
      { seed: SEED, numRuns: 150 },
    );
  });
});

/** What drain decides, by the parser and the checks it applies (not strict). */
function isValid(bytes: Buffer): boolean {
  try {
    return headerProblem(parseMessage(bytes).header) === undefined;
  } catch {
    return false;
  }
}

/** A JSON value with its object keys sorted (the order Go writes `context` in). */
function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sorted((value as Record<string, unknown>)[k])]),
  );
}
