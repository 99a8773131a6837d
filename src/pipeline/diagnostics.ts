import path from 'node:path';
import { PipelineError } from '../core/errors.js';
import type { SourcePosition } from '../core/pipeline.js';

export interface Diagnostic {
  severity: 'error' | 'warning';
  /** Absolute path of the file concerned (the pipeline, an imported file or a params file). */
  file: string;
  line: number;
  col: number;
  message: string;
  hint?: string;
}

/** Collects diagnostics so one pass can report every problem, not only the first. */
export class DiagnosticSink {
  readonly #items: Diagnostic[] = [];
  readonly #seen = new Set<string>();

  error(at: SourcePosition, message: string, hint?: string): void {
    this.#add('error', at, message, hint);
  }

  warning(at: SourcePosition, message: string, hint?: string): void {
    this.#add('warning', at, message, hint);
  }

  get hasErrors(): boolean {
    return this.#items.some((d) => d.severity === 'error');
  }

  /**
   * Sorted by file (code-unit order: `localeCompare` would load the ICU collator, ~5 ms of a
   * `troupe validate`) and position, each diagnostic once (inherited fields are checked once per child).
   */
  list(): Diagnostic[] {
    const byFile = (a: Diagnostic, b: Diagnostic) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0);
    return [...this.#items].sort((a, b) => byFile(a, b) || a.line - b.line || a.col - b.col);
  }

  errors(): Diagnostic[] {
    return this.list().filter((d) => d.severity === 'error');
  }

  #add(severity: Diagnostic['severity'], at: SourcePosition, text: string, hintText?: string): void {
    // one line each, whatever the file put into them (a mapping used as a key prints on several)
    const message = oneLine(text);
    const hint = hintText === undefined ? undefined : oneLine(hintText);
    const key = `${severity}\0${at.file}\0${at.line}\0${at.col}\0${message}`;
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
    this.#items.push({
      severity,
      file: at.file,
      line: at.line,
      col: at.col,
      message,
      ...(hint ? { hint } : {}),
    });
  }
}

function oneLine(text: string): string {
  return text.includes('\n') ? text.replace(/\s*\n\s*/g, ' ') : text;
}

/** A path as people want to read it: relative to the working directory when inside it. */
export function displayPath(file: string): string {
  if (!path.isAbsolute(file)) return file;
  const relative = path.relative(process.cwd(), file);
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
}

/** One diagnostic as `troupe validate` prints it: `file:line:col: severity: message`, then its hint. */
export function formatDiagnostic(d: Diagnostic): string {
  const line = `${displayPath(d.file)}:${d.line}:${d.col}: ${d.severity}: ${d.message}`;
  return d.hint ? `${line}\n  hint: ${d.hint}` : line;
}

/** The first error as a thrown PipelineError; the hint says how many more there are. */
export function toPipelineError(errors: Diagnostic[]): PipelineError {
  const [first] = errors;
  if (!first) throw new Error('toPipelineError needs at least one error');
  const more = errors.length - 1;
  const hint = [
    first.hint,
    more > 0 ? `${more} more error${more === 1 ? '' : 's'}: run \`troupe validate\` to see all` : undefined,
  ]
    .filter(Boolean)
    .join('; ');
  return new PipelineError(displayPath(first.file), first.line, first.col, first.message, hint || undefined);
}
