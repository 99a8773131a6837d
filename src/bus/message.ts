import { messageOf } from '../core/errors.js';
import { nestsDeeperThan } from '../core/nesting.js';
import { MessageInvalidError } from './errors.js';
import { goJson, sortMaps } from './go-json.js';

/** A header's kind and priority: the bus's vocabularies (core/bus-vocabulary.ts) under AMQ's names. */

/** 10 MiB: exactly this size is allowed, one byte more is not. */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/**
 * How deep a header's JSON may nest (the header object itself is level 1). AMQ (Go) allows 10,000;
 * troupe stops far below what its own recursive code (JSON.stringify, the Go-format writer) can
 * take, so a hostile `context` is dead-lettered on read rather than crashing whoever prints it.
 */
export const MAX_HEADER_DEPTH = 100;

/**
 * A message header as read from disk. `priority` and `kind` are plain strings here because a
 * file may hold anything; validation (validate.ts) decides whether it is usable.
 */
export interface Header {
  schema: number;
  id: string;
  from: string;
  to: string[];
  thread: string;
  subject?: string;
  created: string;
  refs?: string[];
  priority?: string;
  kind?: string;
  labels?: string[];
  context?: Record<string, unknown>;
  reply_to?: string;
  reply_project?: string;
  from_project?: string;
}

export interface Message {
  header: Header;
  body: string;
}

type FieldType = 'int' | 'string' | 'strings' | 'object';

// Go struct order: the serialization order of the header keys.
const FIELDS: Array<[keyof Header, FieldType]> = [
  ['schema', 'int'],
  ['id', 'string'],
  ['from', 'string'],
  ['to', 'strings'],
  ['thread', 'string'],
  ['subject', 'string'],
  ['created', 'string'],
  ['refs', 'strings'],
  ['priority', 'string'],
  ['kind', 'string'],
  ['labels', 'strings'],
  ['context', 'object'],
  ['reply_to', 'string'],
  ['reply_project', 'string'],
  ['from_project', 'string'],
];
const ALWAYS = new Set<keyof Header>(['schema', 'id', 'from', 'to', 'thread', 'created']);

/** The exact bytes AMQ writes: `---json`, Go-indented header, `---`, body with a final newline. */
export function formatMessage(header: Header, body: string): Buffer {
  const ordered: Record<string, unknown> = {};
  for (const [key] of FIELDS) {
    const value = key === 'schema' ? header.schema || 1 : header[key];
    if (!ALWAYS.has(key) && isEmpty(value)) continue;
    ordered[key] = key === 'context' ? sortMaps(value) : value;
  }
  const tail = body !== '' && !body.endsWith('\n') ? '\n' : '';
  return Buffer.from(`---json\n${goJson(ordered)}\n---\n${body}${tail}`, 'utf8');
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value).length === 0;
  return false;
}

const START = '---json\n';
const END = '\n---\n';

/**
 * Reads a message as AMQ's parser does: CRLF normalised, `---json` line, one JSON value,
 * optional blank lines, a `---` line, then the body verbatim. Throws MessageInvalidError
 * (`parse_error`) for anything else, including a file over 10 MiB or a header nested deeper
 * than MAX_HEADER_DEPTH.
 */
export function parseMessage(bytes: Buffer): Message {
  if (bytes.length > MAX_MESSAGE_BYTES) {
    throw new MessageInvalidError('parse_error', `message is ${bytes.length} bytes, over the 10 MiB limit`);
  }
  const text = bytes.toString('utf8').replaceAll('\r\n', '\n');
  if (!text.startsWith(START)) throw new MessageInvalidError('parse_error', 'missing frontmatter start');
  // A JSON value holds no raw newline inside a string, so the first `\n---\n` closes the header.
  const end = text.indexOf(END, START.length - 1);
  if (end < 0) throw new MessageInvalidError('parse_error', 'missing frontmatter end');
  const json = text.slice(START.length, end + 1);
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (error) {
    throw new MessageInvalidError('parse_error', `invalid header JSON: ${messageOf(error)}`);
  }
  if (nestsDeeperThan(raw, MAX_HEADER_DEPTH)) {
    throw new MessageInvalidError('parse_error', `header JSON nests deeper than ${MAX_HEADER_DEPTH} levels`);
  }
  return { header: decodeHeader(raw), body: text.slice(end + END.length) };
}

/** Go's json.Unmarshal into the header struct: keys matched case-insensitively, unknown keys dropped, types enforced. */
export function decodeHeader(raw: unknown): Header {
  const header: Header = { schema: 0, id: '', from: '', to: [], thread: '', created: '' };
  if (raw === null) return header;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new MessageInvalidError(
      'parse_error',
      `json: cannot unmarshal ${goType(raw)} into Go value of type Header`,
    );
  }
  for (const [key, value] of Object.entries(raw)) {
    const field =
      FIELDS.find(([name]) => name === key) ?? FIELDS.find(([name]) => name === key.toLowerCase());
    if (!field) continue;
    const [name, type] = field;
    if (value === null) continue;
    const mismatch = () =>
      new MessageInvalidError(
        'parse_error',
        `json: cannot unmarshal ${goType(value)} into Go struct field Header.${name} of type ${goTypeName(type)}`,
      );
    switch (type) {
      case 'int':
        if (typeof value !== 'number' || !Number.isInteger(value)) throw mismatch();
        break;
      case 'string':
        if (typeof value !== 'string') throw mismatch();
        break;
      case 'strings':
        if (!Array.isArray(value) || value.some((v) => v !== null && typeof v !== 'string')) throw mismatch();
        (header as unknown as Record<string, unknown>)[name] = value.map((v) => v ?? '');
        continue;
      case 'object':
        if (typeof value !== 'object' || Array.isArray(value)) throw mismatch();
        break;
    }
    (header as unknown as Record<string, unknown>)[name] = value;
  }
  return header;
}

function goType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'object';
  return typeof value;
}

function goTypeName(type: FieldType): string {
  return { int: 'int', string: 'string', strings: '[]string', object: 'map[string]interface {}' }[type];
}

/** Messages in the order AMQ shows them: by `created`, ties by id. */
export function byCreated<T extends { created: string; id: string; createdNs?: bigint }>(a: T, b: T): number {
  const ta = a.createdNs ?? 0n;
  const tb = b.createdNs ?? 0n;
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
