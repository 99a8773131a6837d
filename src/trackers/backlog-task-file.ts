import { isMap, isScalar, type Node, type Pair, parseDocument, stringify } from 'yaml';
import { TrackerError } from '../core/tracker.js';
import { DiagnosticSink } from '../pipeline/diagnostics.js';
import { YamlSource } from '../pipeline/yaml-source.js';

/**
 * A Backlog.md task file as text (docs/trackers.md, "Local backlog"): YAML front matter between a
 * first line `---` and the next, then Markdown sections between Backlog.md's markers. Every edit
 * here changes only the lines it must (a front matter key's own lines, troupe's own section) and
 * keeps every other byte, so a person's file stays theirs.
 */

/** The front matter fields troupe reads, as written (strings), after Backlog.md's own leniency. */
export interface TaskFields {
  id: string | null;
  title: string | null;
  status: string | null;
  assignee: string[];
  labels: string[];
  dependencies: string[];
  priority: string | null;
  createdDate: string | null;
  updatedDate: string | null;
}

export interface TaskFile {
  fields: TaskFields;
  description: string;
  /** troupe's progress note, if it wrote one. */
  progress: string | null;
  /** Pull requests troupe linked. */
  links: string[];
}

interface Split {
  /** Offsets of the front matter's YAML text in the file. */
  start: number;
  end: number;
  yaml: string;
  eol: '\n' | '\r\n';
}

function splitFrontMatter(text: string): Split | null {
  const open = /^\uFEFF?---[ \t]*(\r?\n)/.exec(text);
  if (!open) return null;
  const start = open[0].length;
  const close = /^---[ \t]*\r?$/m.exec(text.slice(start));
  if (!close) return null;
  return {
    start,
    end: start + close.index,
    yaml: text.slice(start, start + close.index),
    eol: open[1] as '\n' | '\r\n',
  };
}

/**
 * Backlog.md quotes a bare `assignee: @sara` (and `@` entries of a flow list) before parsing,
 * since YAML reserves `@`; people write it that way by hand. The line count stays the same.
 */
function quoteBareHandles(yaml: string): string {
  // `(.*)` then a trim, not `(.*?)\s*$`: a lazy match before trailing blanks is quadratic on a long line
  return yaml.replace(/^((?:assignee|reporter):[ \t]*)(.*)$/gm, (line, key: string, rest: string) => {
    const value = rest.trimEnd();
    const blanks = rest.slice(value.length);
    if (value.startsWith('@')) return `${key}${JSON.stringify(value)}${blanks}`;
    const flow = /^\[([^\]]*)\]$/.exec(value);
    if (!flow?.[1]?.includes('@')) return line;
    const items = flow[1].split(',').map((item) => {
      const trimmed = item.trim();
      return trimmed.startsWith('@') ? JSON.stringify(trimmed) : trimmed;
    });
    return `${key}[${items.join(', ')}]${blanks}`;
  });
}

/** `where:line: message`, the one shape a bad task file is reported in. */
function invalid(where: string, line: number, message: string): TrackerError {
  return new TrackerError('invalid', `${where}:${line}: ${message}`, {
    hint: 'fix the file (Backlog.md task files start with YAML front matter between two `---` lines)',
  });
}

function parseFrontMatter(text: string, where: string): { split: Split; data: Record<string, unknown> } {
  const split = splitFrontMatter(text);
  if (!split)
    throw invalid(where, 1, 'no front matter: the file must start with `---` and close it with `---`');
  const sink = new DiagnosticSink();
  const source = YamlSource.parse(where, quoteBareHandles(split.yaml), sink);
  const first = sink.errors()[0];
  // the YAML starts on the file's second line
  if (!source || first)
    throw invalid(where, (first?.line ?? 1) + 1, first?.message ?? 'the front matter cannot be read');
  const value = source.value();
  if (value === null || value === undefined) return { split, data: {} };
  if (typeof value !== 'object' || Array.isArray(value))
    throw invalid(where, 2, 'the front matter is not a mapping of fields');
  const data = value as Record<string, unknown>;
  for (const key of ['id', 'title', 'status', 'priority'] as const) {
    const field = data[key];
    if (field !== undefined && field !== null && typeof field === 'object' && !(field instanceof Date)) {
      throw invalid(where, source.keyPosition([], key).line + 1, `\`${key}\` must be a single value`);
    }
  }
  return { split, data };
}

function text(value: unknown): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (value instanceof Date) return value.toISOString();
  return String(value);
}

function list(value: unknown): string[] {
  if (Array.isArray(value))
    return value.filter((v) => v !== null && v !== undefined && typeof v !== 'object').map(String);
  // Backlog.md reads a single assignee written as a string as a list of one
  const one = typeof value === 'object' ? null : text(value);
  return one === null ? [] : [one];
}

export function readTaskFile(content: string, where: string): TaskFile {
  const { split, data } = parseFrontMatter(content, where);
  const body = content.slice(split.end).replace(/^---[^\n]*\n?/, '');
  return {
    fields: {
      id: text(data.id),
      title: text(data.title),
      status: text(data.status),
      assignee: list(data.assignee),
      labels: list(data.labels),
      dependencies: list(data.dependencies),
      priority: text(data.priority)?.toLowerCase() ?? null,
      createdDate: text(data.created_date),
      updatedDate: text(data.updated_date),
    },
    description: describe(body),
    progress: blockText(content, 'PROGRESS'),
    links: (blockText(content, 'LINKS') ?? '')
      .split(/\r?\n/)
      .map((line) => /^- Pull request: (\S+)$/.exec(line)?.[1])
      .filter((url): url is string => url !== undefined),
  };
}

/**
 * The description as Backlog.md reads it: between its markers, else the `## Description`
 * section up to the next heading, else (a hand-written file) the text before the first heading.
 */
function describe(body: string): string {
  // indexOf, not a regex: a file full of BEGIN markers without an END must stay linear
  const open = body.indexOf(DESCRIPTION_BEGIN);
  const close = open < 0 ? -1 : body.indexOf(DESCRIPTION_END, open);
  if (close >= 0) return body.slice(open + DESCRIPTION_BEGIN.length, close).trim();
  const section = /^## Description[ \t]*\r?\n/m.exec(body);
  const from = section ? section.index + section[0].length : 0;
  const next = /^## /m.exec(body.slice(from));
  return body.slice(from, next ? from + next.index : body.length).trim();
}

const DESCRIPTION_BEGIN = '<!-- SECTION:DESCRIPTION:BEGIN -->';
const DESCRIPTION_END = '<!-- SECTION:DESCRIPTION:END -->';

// ---- front matter edits ----

export type FieldEdit =
  | { key: 'status'; value: string }
  | { key: 'assignee'; value: string[] }
  | { key: 'updated_date'; value: string };

/** Where a new key goes when the file lacks it: after the key Backlog.md writes before it. */
const WRITTEN_AFTER: Record<FieldEdit['key'], string[]> = {
  status: ['title', 'id'],
  assignee: ['status', 'title', 'id'],
  updated_date: ['created_date', 'assignee', 'status'],
};

function scalar(value: string): string {
  return stringify(value, { singleQuote: true, lineWidth: 0 }).trimEnd();
}

function serialize(edit: FieldEdit, eol: string): string {
  if (edit.key === 'updated_date') return ` '${edit.value}'`;
  if (edit.key === 'status') return ` ${scalar(edit.value)}`;
  if (edit.value.length === 0) return ' []';
  return edit.value.map((name) => `${eol}  - ${scalar(name)}`).join('');
}

/**
 * `content` with the given front matter keys rewritten (or added) and nothing else changed.
 * A file Backlog.md would have to quote (`assignee: @sara`) gets those lines quoted too.
 */
export function editFrontMatter(content: string, edits: readonly FieldEdit[], where: string): string {
  const { split, data } = parseFrontMatter(content, where);
  const edited = editedText(content, split, edits);
  // the edit is by position: check it changed exactly the keys it meant to (a flow-style front
  // matter, say, is refused rather than broken)
  const after = parseFrontMatter(edited, where).data;
  const expected: Record<string, unknown> = { ...data };
  for (const edit of edits) expected[edit.key] = edit.value;
  const byKey = (fields: Record<string, unknown>) =>
    JSON.stringify(Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  if (byKey(after) !== byKey(expected)) {
    throw invalid(
      where,
      2,
      'troupe cannot change this front matter in place: write it as Backlog.md does, one key per line',
    );
  }
  return edited;
}

function editedText(content: string, split: Split, edits: readonly FieldEdit[]): string {
  const yaml = quoteBareHandles(split.yaml);
  const doc = parseDocument(yaml);
  const pairs = isMap(doc.contents) ? (doc.contents.items as Pair<Node, Node | null>[]) : [];
  const keyOf = (pair: Pair<Node, Node | null>) => (isScalar(pair.key) ? String(pair.key.value) : null);
  const replacements: Array<{ from: number; to: number; text: string }> = [];
  for (const edit of edits) {
    const pair = pairs.find((p) => keyOf(p) === edit.key);
    if (pair?.key.range) {
      let to = Math.max(pair.key.range[1], pair.value?.range?.[1] ?? 0);
      while (to > pair.key.range[0] && (yaml[to - 1] === '\n' || yaml[to - 1] === '\r')) to--;
      replacements.push({ from: pair.key.range[0], to, text: `${edit.key}:${serialize(edit, split.eol)}` });
      continue;
    }
    const before = WRITTEN_AFTER[edit.key]
      .map((key) => pairs.find((p) => keyOf(p) === key))
      .find((p) => p?.key.range);
    let at = before ? Math.max(before.key.range![1], before.value?.range?.[1] ?? 0) : yaml.length;
    while (at > 0 && (yaml[at - 1] === '\n' || yaml[at - 1] === '\r')) at--;
    // after a comment that ends the line, not before it
    const lineEnd = yaml.indexOf('\n', at);
    if (lineEnd >= 0) at = yaml[lineEnd - 1] === '\r' ? lineEnd - 1 : lineEnd;
    const line = `${edit.key}:${serialize(edit, split.eol)}`;
    replacements.push({ from: at, to: at, text: at === 0 ? `${line}${split.eol}` : `${split.eol}${line}` });
  }
  let edited = yaml;
  for (const r of replacements.sort((a, b) => b.from - a.from)) {
    edited = edited.slice(0, r.from) + r.text + edited.slice(r.to);
  }
  // a file with an empty front matter: the closing `---` must stay on a line of its own
  if (split.yaml === '' && edited !== '' && !edited.endsWith('\n')) edited += split.eol;
  return content.slice(0, split.start) + edited + content.slice(split.end);
}

// ---- troupe's own section ----

/**
 * troupe writes its notes in a section of its own at the end of the file, each part between
 * markers, as Backlog.md does for its sections. Backlog.md keeps sections it does not know when
 * it rewrites a task, and never shows them in its board.
 */
const SECTION_HEADING = '## Troupe';
type Block = 'PROGRESS' | 'LINKS';
const begin = (block: Block) => `<!-- TROUPE:${block}:BEGIN -->`;
const end = (block: Block) => `<!-- TROUPE:${block}:END -->`;

/** The last such block: troupe's section is the file's last. */
function findBlock(content: string, block: Block): { inner: number; innerEnd: number } | null {
  const at = content.lastIndexOf(begin(block));
  if (at < 0) return null;
  const close = content.indexOf(end(block), at);
  if (close < 0) return null;
  let inner = at + begin(block).length;
  if (content.startsWith('\r\n', inner)) inner += 2;
  else if (content.startsWith('\n', inner)) inner += 1;
  return { inner, innerEnd: close };
}

function blockText(content: string, block: Block): string | null {
  const found = findBlock(content, block);
  return found ? content.slice(found.inner, found.innerEnd).trim() : null;
}

/**
 * Text from troupe made inert as Markdown structure: no comment could close or open a marker,
 * no line becomes a heading that Backlog.md would take for a section of its own.
 */
function inert(note: string, eol: string): string {
  return note
    .replace(/\r\n?/g, '\n')
    .trim()
    .split('\n')
    .map((line) => line.replaceAll('<!--', '&lt;!--').replace(/^(\s*)#/, '$1\\#'))
    .join(eol);
}

function eolOf(content: string): string {
  return /^[^\n]*\r\n/.test(content) ? '\r\n' : '\n';
}

function writeBlock(content: string, block: Block, inner: string): string {
  const eol = eolOf(content);
  const found = findBlock(content, block);
  const body = inner === '' ? '' : `${inner}${eol}`;
  if (found) return content.slice(0, found.inner) + body + content.slice(found.innerEnd);
  const whole = `${begin(block)}${eol}${body}${end(block)}`;
  // after troupe's other block when there is one, else a new section at the end
  const other = findBlock(content, block === 'PROGRESS' ? 'LINKS' : 'PROGRESS');
  if (other) {
    const after = other.innerEnd + end(block === 'PROGRESS' ? 'LINKS' : 'PROGRESS').length;
    return `${content.slice(0, after)}${eol}${eol}${whole}${content.slice(after)}`;
  }
  const trimmed = content.replace(/(\r?\n)*$/, '');
  return `${trimmed}${eol}${eol}${SECTION_HEADING}${eol}${eol}${whole}${eol}`;
}

/** `content` with troupe's one progress note set to `note`. */
export function withProgress(content: string, note: string): string {
  return writeBlock(content, 'PROGRESS', inert(note, eolOf(content)));
}

/** `content` with `url` among the pull requests troupe linked (once). */
export function withLink(content: string, url: string): string {
  const current = blockText(content, 'LINKS');
  const line = `- Pull request: ${url}`;
  const lines = current ? current.split(/\r?\n/) : [];
  if (lines.includes(line)) return content;
  return writeBlock(content, 'LINKS', [...lines, line].join(eolOf(content)));
}
