import { type Document, isCollection, isMap, isScalar, LineCounter, type Node, parseDocument } from 'yaml';
import type { SourcePosition } from '../core/pipeline.js';
import type { DiagnosticSink } from './diagnostics.js';

export type Path = readonly (string | number)[];

/**
 * One parsed YAML file that can say where any value in it was written, so every error points at
 * the offending node rather than at the file.
 */
export class YamlSource {
  readonly #doc: Document.Parsed;
  readonly #lines: LineCounter;

  private constructor(
    readonly file: string,
    doc: Document.Parsed,
    lines: LineCounter,
  ) {
    this.#doc = doc;
    this.#lines = lines;
  }

  /** Parses `text`; syntax errors go to `sink` and yield undefined. */
  static parse(file: string, text: string, sink: DiagnosticSink): YamlSource | undefined {
    const lines = new LineCounter();
    // merge: PyYAML (which aqm uses) honours `<<` merge keys, so aqm files may rely on them.
    const doc = parseDocument(text, { lineCounter: lines, merge: true, prettyErrors: false });
    const source = new YamlSource(file, doc, lines);
    for (const error of doc.errors) {
      sink.error(
        source.#at(error.pos[0]),
        `YAML syntax error: ${firstLine(error.message)}`,
        yamlHint(error.code),
      );
    }
    for (const warning of doc.warnings) sink.warning(source.#at(warning.pos[0]), firstLine(warning.message));
    return doc.errors.length > 0 ? undefined : source;
  }

  /** The document as plain data (null for an empty file). */
  value(): unknown {
    return this.#doc.toJS({ maxAliasCount: 1000 });
  }

  /** Where the value at `path` was written, or its nearest written ancestor (for missing keys). */
  position(path: Path): SourcePosition {
    for (let depth = path.length; depth >= 0; depth--) {
      const node = this.#node(path.slice(0, depth));
      if (node?.range) return this.#at(node.range[0]);
    }
    return { file: this.file, line: 1, col: 1 };
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
