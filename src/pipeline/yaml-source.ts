import {
  CST,
  type Document,
  isCollection,
  isMap,
  isPair,
  isScalar,
  Lexer,
  LineCounter,
  type Node,
  Parser,
  parseDocument,
  visit,
} from 'yaml';
import { sizeText } from '../core/input-limit.js';
import type { SourcePosition } from '../core/pipeline.js';
import type { DiagnosticSink } from './diagnostics.js';
import { aliasExpansion, MAX_ALIAS_EXPANSION_BYTES } from './yaml-alias-size.js';

export type Path = readonly (string | number)[];

/**
 * One parsed YAML file that can say where any value in it was written, so every error points at
 * the offending node rather than at the file.
 */
export class YamlSource {
  readonly #doc: Document.Parsed;
  readonly #lines: LineCounter;
  readonly #text: string;

  readonly #value: unknown;

  private constructor(
    readonly file: string,
    doc: Document.Parsed,
    lines: LineCounter,
    text: string,
    value: unknown,
  ) {
    this.#doc = doc;
    this.#text = text;
    this.#lines = lines;
    this.#value = value;
  }

  /**
   * Parses `text`; syntax errors go to `sink` and yield undefined. So do files the checks could not
   * walk safely: nested deeper than MAX_DEPTH, or with aliases that expand to too many nodes or
   * to too much text (MAX_ALIAS_EXPANSION_BYTES), or that sit inside the value they refer to.
   */
  static parse(file: string, text: string, sink: DiagnosticSink): YamlSource | undefined {
    const lines = new LineCounter();
    const at = (offset: number) => ({ file, ...lines.linePos(offset) });
    // merge: PyYAML (which aqm uses) honours `<<` merge keys, so aqm files may rely on them.
    // logLevel: the library would print its warnings on stderr (a collection used as a key, which
    // the schema check then reports as an unknown field)
    const doc = parseDocument(text, {
      lineCounter: lines,
      merge: true,
      prettyErrors: false,
      logLevel: 'error',
    });
    if (doc.errors.some((e) => e.code === 'RESOURCE_EXHAUSTION')) {
      // the parser ran out of stack: say where the nesting got too deep, not where it gave up
      const deep = firstTooDeep(cstDocuments(text), cstChildren, (t) => t.offset);
      sink.error(at(deep ?? doc.errors[0]!.pos[0]), tooDeepMessage, tooDeepHint);
      return undefined;
    }
    for (const error of doc.errors) {
      const where = unclosedQuoteAt(text, error.message) ?? error.pos[0];
      sink.error(at(where), `YAML syntax error: ${firstLine(error.message)}`, yamlHint(error.code));
    }
    for (const warning of doc.warnings) sink.warning(at(warning.pos[0]), firstLine(warning.message));
    if (doc.errors.length > 0) return undefined;
    const root = doc.contents as Node | null;
    const deep = root ? firstTooDeep([root], nodeChildren, (n) => n.range?.[0] ?? 0) : undefined;
    if (deep !== undefined) {
      sink.error(at(deep), tooDeepMessage, tooDeepHint);
      return undefined;
    }
    const expansion = aliasExpansion(doc);
    if (expansion.overflowAt !== undefined) {
      sink.error(
        at(expansion.overflowAt),
        `YAML aliases expand to more than ${sizeText(MAX_ALIAS_EXPANSION_BYTES)} of text`,
        'write the repeated value once, or refer to it less often: each `*alias` repeats its whole anchor',
      );
      return undefined;
    }
    if (expansion.cycleAt !== undefined) {
      sink.error(
        at(expansion.cycleAt),
        'YAML alias inside the value it refers to: it would contain itself',
        'an `*alias` may refer only to a value that ends before it',
      );
      return undefined;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      // the YAML library refuses these only when it builds the values
      const message = error instanceof Error ? error.message : String(error);
      if (/alias count/i.test(message)) {
        sink.error(
          at(firstOffset(doc, 'alias') ?? 0),
          `YAML aliases expand to too many nodes: ${message.toLowerCase()}`,
          `write the values out, or use fewer \`*alias\` references (at most ${MAX_ALIAS_COUNT} expanded nodes)`,
        );
      } else if (/merge/i.test(message)) {
        sink.error(
          at(firstOffset(doc, 'merge') ?? 0),
          `YAML merge key: ${message.toLowerCase()}`,
          'merge a mapping: `<<: *name`, where `&name` marks a mapping',
        );
      } else {
        sink.error(at(0), `the YAML cannot be read: ${firstLine(message)}`);
      }
      return undefined;
    }
    return new YamlSource(file, doc, lines, text, value);
  }

  /** The document as plain data (null for an empty file). */
  value(): unknown {
    return this.#value;
  }

  /** Where the value at `path` was written, or its nearest written ancestor (for missing keys). */
  position(path: Path): SourcePosition {
    for (let depth = path.length; depth >= 0; depth--) {
      const node = this.#node(path.slice(0, depth));
      if (node?.range) return this.#at(node.range[0]);
    }
    return { file: this.file, line: 1, col: 1 };
  }

  /** Where `written` stands inside the string at `path` as the file spells it, else the string. */
  positionWithin(path: Path, written: string): SourcePosition {
    const range = this.#node(path)?.range;
    if (!range) return this.position(path);
    const offset = this.#text.slice(range[0], range[1]).indexOf(written);
    return this.#at(range[0] + Math.max(offset, 0));
  }

  /** Where the key `key` of the mapping at `path` was written (for unknown keys). */
  keyPosition(path: Path, key: string): SourcePosition {
    const map = this.#node(path);
    if (isMap(map)) {
      const pair = map.items.find((item) => isScalar(item.key) && String(item.key.value) === key);
      const keyNode = pair?.key as Node | undefined;
      if (keyNode?.range) return this.#at(keyNode.range[0]);
    }
    return this.position(path);
  }

  #node(path: Path): Node | undefined {
    if (path.length === 0) return (this.#doc.contents as Node | null) ?? undefined;
    const node = this.#doc.getIn(path, true);
    return isCollection(node) || isScalar(node) ? node : undefined;
  }

  #at(offset: number): SourcePosition {
    const { line, col } = this.#lines.linePos(offset);
    return { file: this.file, line, col };
  }
}

function firstLine(message: string): string {
  return message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? message;
}

function yamlHint(code: string): string | undefined {
  switch (code) {
    case 'DUPLICATE_KEY':
      return 'each key may appear once per mapping';
    case 'TAB_AS_INDENT':
      return 'indent with spaces, not tabs';
    case 'MULTIPLE_DOCS':
      return 'a pipeline file holds one YAML document; remove the extra `---`';
    case 'BAD_INDENT':
    case 'MISSING_CHAR':
    case 'UNEXPECTED_TOKEN':
      return 'check the indentation and the brackets or quotes around this point';
    default:
      return undefined;
  }
}

/** Pipelines need a handful of levels; the YAML library and the checks recurse, so a limit well below the stack's. */
export const MAX_DEPTH = 100;
const MAX_ALIAS_COUNT = 1000;
const tooDeepMessage = `YAML nested more than ${MAX_DEPTH} levels deep`;
const tooDeepHint = 'a pipeline needs a few levels of nesting; check for runaway brackets or indentation';

/**
 * The offset of the first collection nested deeper than MAX_DEPTH, walking without recursion
 * (the point is to survive files that overflow the stack).
 */
function firstTooDeep<T>(
  roots: T[],
  children: (node: T) => T[],
  offset: (node: T) => number,
): number | undefined {
  const stack = roots.map((node) => ({ node, depth: 0 }));
  for (let item = stack.pop(); item; item = stack.pop()) {
    const kids = children(item.node);
    if (kids.length === 0) continue;
    if (item.depth >= MAX_DEPTH) return offset(item.node);
    for (const node of kids) stack.push({ node, depth: item.depth + 1 });
  }
  return undefined;
}

function nodeChildren(node: Node): Node[] {
  if (!isCollection(node)) return [];
  return node.items.flatMap((item) =>
    isPair(item) ? ([item.key, item.value].filter(Boolean) as Node[]) : [item as Node],
  );
}

type CstToken = CST.Token & {
  items?: { key?: CST.Token | null; value?: CST.Token | null }[];
  value?: CST.Token;
};

function cstDocuments(text: string): CstToken[] {
  return [...new Parser().parse(text)].flatMap((token) =>
    token.type === 'document' && token.value ? [token.value as CstToken] : [],
  );
}

function cstChildren(token: CstToken): CstToken[] {
  if (!Array.isArray(token.items)) return [];
  return token.items.flatMap((item) => [item.key, item.value].filter(Boolean) as CstToken[]);
}

/** Where the first alias (`*x`) or merge key (`<<`) of the document is. */
function firstOffset(doc: Document.Parsed, kind: 'alias' | 'merge'): number | undefined {
  let found: number | undefined;
  visit(doc, {
    Alias(_, node) {
      if (kind !== 'alias') return undefined;
      found = node.range?.[0];
      return visit.BREAK;
    },
    Pair(_, pair) {
      if (kind !== 'merge' || !isScalar(pair.key) || pair.key.source !== '<<') return undefined;
      found = pair.key.range?.[0];
      return visit.BREAK;
    },
  });
  return found;
}

/**
 * Where a quoted scalar that never closes opens: the parser reports it where it gave up (the end
 * of the file), but the mistake is at the opening quote.
 */
function unclosedQuoteAt(text: string, message: string): number | undefined {
  const quote = /^Missing closing (["'])quote/.exec(message)?.[1];
  if (!quote) return undefined;
  let offset = 0;
  for (const lexeme of new Lexer().lex(text)) {
    if (lexeme.startsWith(quote) && !closes(lexeme, quote)) return offset;
    // the lexer's markers of a document, a scalar and a flow's end are not in the text
    if (!CST_MARKERS.has(lexeme)) offset += lexeme.length;
  }
  return undefined;
}

const CST_MARKERS = new Set([CST.DOCUMENT, CST.SCALAR, CST.FLOW_END]);

function closes(lexeme: string, quote: string): boolean {
  if (lexeme.length < 2 || !lexeme.endsWith(quote)) return false;
  if (quote === "'") return true; // '' inside is an escaped quote, and the scalar ends at a lone one
  let backslashes = 0;
  for (let i = lexeme.length - 2; i > 0 && lexeme[i] === '\\'; i--) backslashes++;
  return backslashes % 2 === 0;
}
