import jsep from 'jsep';
import { messageOf, TroupeError } from '../../core/errors.js';

/**
 * Handoff conditions such as `severity == critical` or `result.score >= 80 and not blocked`,
 * evaluated against named fields of the agent's output. aqm only looked for the value as a word
 * anywhere in the output (so "NOT critical" matched `severity == critical`); troupe reads the
 * field. Expressions are parsed with jsep and interpreted here, never eval'd. The built-in
 * keywords (always, on_approve, …) are the caller's business.
 */

export type FieldValue = string | number | boolean;
export type Fields = Record<string, FieldValue>;

export type ConditionCheck = { ok: true } | { ok: false; message: string };

jsep.addBinaryOp('in', 7);
jsep.addBinaryOp('and', 2);
jsep.addBinaryOp('or', 1);
jsep.addUnaryOp('not');

/**
 * A handoff condition that does not parse; validation reports it at its place in the pipeline,
 * with the list of conditions as the hint (check-references.ts).
 */
export class ConditionError extends TroupeError {
  readonly code = 'condition_invalid';
}

export function parseCondition(expr: string): ConditionCheck {
  try {
    compile(expr);
    return { ok: true };
  } catch (error) {
    if (!(error instanceof ConditionError)) throw error;
    return { ok: false, message: error.message };
  }
}

/** False, never an error, for an expression that does not parse or reads a missing field. */
export function evaluateCondition(expr: string, output: string): boolean {
  let condition: Condition;
  try {
    condition = compile(expr);
  } catch (error) {
    if (!(error instanceof ConditionError)) throw error;
    return false;
  }
  return holds(condition, extractFields(output)) === true;
}

// ── fields ───────────────────────────────────────────────────────────────────

/**
 * The output's named fields, keys lower-cased: `key: value` lines (markdown bold, bullets and
 * headings allowed; a later line wins), overridden by the last JSON object in the output,
 * fenced or bare, with nested keys flattened to `a.b`. Arrays and nulls are not fields.
 */
export function extractFields(output: string): Fields {
  const fields: Fields = {};
  for (const m of output.matchAll(FIELD_LINE)) {
    const value = unwrap(m[2] ?? '');
    if (value !== '') fields[(m[1] ?? '').toLowerCase()] = scalar(value);
  }
  const json = lastJsonObject(output);
  if (json) flatten(json, '', fields);
  return fields;
}

const FIELD_LINE =
  /^[ \t]*(?:(?:[-*+>]|#{1,6})[ \t]+)?(?:\*\*)?([A-Za-z_][\w.-]*)(?:\*\*)?[ \t]*:(?:\*\*)?[ \t]*(.*)$/gm;

function unwrap(value: string): string {
  return value
    .trim()
    .replace(/^(\*\*|`|"|')(.*)\1$/, '$2')
    .trim();
}

function scalar(value: string): FieldValue {
  if (/^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (/^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  return value;
}

function flatten(object: Record<string, unknown>, prefix: string, into: Fields): void {
  for (const [key, value] of Object.entries(object)) {
    const path = `${prefix}${key.toLowerCase()}`;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      into[path] = value;
    else if (isPlainObject(value)) flatten(value, `${path}.`, into);
  }
}

/** The last JSON object in free text (fenced or bare), or null; what conditions read fields from. */
export function lastJsonObject(text: string): Record<string, unknown> | null {
  // Spans come in order of their end: the last object is the last one that parses.
  const spans = braceSpans(text);
  for (let i = spans.length - 1; i >= 0; i--) {
    const value = parseObject(text.slice(spans[i]!.start, spans[i]!.end));
    if (value) return value;
  }
  return null;
}

export function parseObject(candidate: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(candidate);
    return isPlainObject(value) ? value : null;
  } catch {
    return null;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface Span {
  start: number;
  end: number;
}

/**
 * Balanced `{…}` spans in free text, in order of their end, in one pass. Braces inside JSON
 * strings do not count; a string ends at a newline as well as at its quote, since JSON strings
 * never span lines and prose quotes should not swallow the rest of the text.
 */
export function braceSpans(text: string): Span[] {
  const spans: Span[] = [];
  const open: number[] = [];
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"' || c === '\n') inString = false;
    } else if (c === '"') inString = open.length > 0;
    else if (c === '{') open.push(i);
    else if (c === '}' && open.length > 0) spans.push({ start: open.pop()!, end: i + 1 });
  }
  return spans;
}

// ── expressions ──────────────────────────────────────────────────────────────

type CompareOp = '==' | '!=' | '>' | '>=' | '<' | '<=';
type Operand = { kind: 'name'; name: string } | { kind: 'literal'; value: FieldValue };
type Condition =
  | { kind: 'and' | 'or'; left: Condition; right: Condition }
  | { kind: 'not'; operand: Condition }
  | { kind: 'compare'; op: CompareOp; left: Operand; right: Operand }
  | { kind: 'in'; left: Operand; list: Operand[] }
  | { kind: 'truthy'; operand: Operand };

const COMPARE_OPS = new Set<string>(['==', '!=', '>', '>=', '<', '<=']);
const LOGIC_OPS = new Map<string, 'and' | 'or'>([
  ['&&', 'and'],
  ['and', 'and'],
  ['||', 'or'],
  ['or', 'or'],
]);
const NEGATIONS = new Set(['!', 'not']);

function compile(expr: string): Condition {
  if (expr.trim() === '') throw new ConditionError('empty condition');
  let tree: jsep.Expression;
  try {
    tree = jsep(expr);
  } catch (error) {
    // jsep's own syntax errors ('Unexpected "=" at character 2')
    throw new ConditionError(messageOf(error), { cause: error });
  }
  return toCondition(tree);
}

function toCondition(node: jsep.Expression): Condition {
  switch (node.type) {
    case 'BinaryExpression': {
      const { operator, left, right } = node as jsep.BinaryExpression;
      const logic = LOGIC_OPS.get(operator);
      if (logic) return { kind: logic, left: toCondition(left), right: toCondition(right) };
      if (!COMPARE_OPS.has(operator) && operator !== 'in') throw unsupportedOperator(operator);
      // jsep binds `not` tighter than `==`; Python (and every reader) binds it looser.
      if (left.type === 'UnaryExpression' && NEGATIONS.has((left as jsep.UnaryExpression).operator)) {
        const inner = { ...node, left: (left as jsep.UnaryExpression).argument };
        return { kind: 'not', operand: toCondition(inner) };
      }
      if (operator === 'in') return { kind: 'in', left: toOperand(left), list: toList(right) };
      return { kind: 'compare', op: operator as CompareOp, left: toOperand(left), right: toOperand(right) };
    }
    case 'UnaryExpression': {
      const { operator, argument } = node as jsep.UnaryExpression;
      if (NEGATIONS.has(operator)) return { kind: 'not', operand: toCondition(argument) };
      return { kind: 'truthy', operand: toOperand(node) };
    }
    case 'Identifier':
    case 'MemberExpression':
    case 'Literal':
      return { kind: 'truthy', operand: toOperand(node) };
    case 'Compound':
      throw new ConditionError('expected one expression; join conditions with and / or');
    default:
      throw new ConditionError(`unsupported expression (${node.type})`);
  }
}

function toOperand(node: jsep.Expression): Operand {
  switch (node.type) {
    case 'Identifier':
    case 'MemberExpression':
      return { kind: 'name', name: dottedName(node) };
    case 'Literal': {
      const { value, raw } = node as jsep.Literal;
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
        return { kind: 'literal', value };
      }
      throw new ConditionError(`unsupported value ${raw}`);
    }
    case 'UnaryExpression': {
      const { operator, argument } = node as jsep.UnaryExpression;
      const value = argument.type === 'Literal' ? (argument as jsep.Literal).value : null;
      if ((operator === '-' || operator === '+') && typeof value === 'number') {
        return { kind: 'literal', value: operator === '-' ? -value : value };
      }
      throw new ConditionError(`unsupported operator '${operator}' in a value`);
    }
    case 'BinaryExpression': {
      const { operator } = node as jsep.BinaryExpression;
      if (!LOGIC_OPS.has(operator) && !COMPARE_OPS.has(operator) && operator !== 'in')
        throw unsupportedOperator(operator);
      throw new ConditionError(`expected a field name or a value, got ${describeNode(node)}`);
    }
    default:
      throw new ConditionError(`expected a field name or a value, got ${describeNode(node)}`);
  }
}

function toList(node: jsep.Expression): Operand[] {
  if (node.type !== 'ArrayExpression') throw new ConditionError("'in' needs a list: field in [a, b]");
  return (node as jsep.ArrayExpression).elements.map((element) => {
    if (!element) throw new ConditionError('empty element in a list');
    return toOperand(element);
  });
}

function dottedName(node: jsep.Expression): string {
  if (node.type === 'Identifier') return (node as jsep.Identifier).name;
  if (node.type === 'MemberExpression') {
    const { object, property, computed } = node as jsep.MemberExpression;
    if (!computed) return `${dottedName(object)}.${(property as jsep.Identifier).name}`;
    if (property.type === 'Literal')
      return `${dottedName(object)}.${String((property as jsep.Literal).value)}`;
  }
  throw new ConditionError(`expected a field name, got ${describeNode(node)}`);
}

function unsupportedOperator(operator: string): ConditionError {
  const hint = operator === '-' ? " (quote values that contain '-': status == 'in-progress')" : '';
  return new ConditionError(`unsupported operator '${operator}'${hint}`);
}

function describeNode(node: jsep.Expression): string {
  return node.type === 'BinaryExpression'
    ? `'${(node as jsep.BinaryExpression).operator}' expression`
    : node.type;
}

// ── evaluation ───────────────────────────────────────────────────────────────

/** Missing fields make a comparison unknown (null); unknown stays unknown through not, and/or are Kleene's. */
type Truth = boolean | null;
const MISSING = Symbol('missing');
type Resolved = FieldValue | typeof MISSING;

function holds(condition: Condition, fields: Fields): Truth {
  switch (condition.kind) {
    case 'and': {
      const [a, b] = [holds(condition.left, fields), holds(condition.right, fields)];
      return a === false || b === false ? false : a === null || b === null ? null : true;
    }
    case 'or': {
      const [a, b] = [holds(condition.left, fields), holds(condition.right, fields)];
      return a === true || b === true ? true : a === null || b === null ? null : false;
    }
    case 'not': {
      const value = holds(condition.operand, fields);
      return value === null ? null : !value;
    }
    case 'truthy':
      return truthy(field(condition.operand, fields));
    case 'compare': {
      // a literal on the left (`"critical" == severity`) makes the right-hand name the field
      const flipped = condition.left.kind === 'literal' && condition.right.kind === 'name';
      const left = field(flipped ? condition.right : condition.left, fields);
      const right = value(flipped ? condition.left : condition.right, fields);
      if (flipped && left !== MISSING) return compare(condition.op, right, left);
      return left === MISSING ? null : compare(condition.op, left, right);
    }
    case 'in': {
      const left = field(condition.left, fields);
      if (left === MISSING) return null;
      return condition.list.some((item) => compare('==', left, value(item, fields)));
    }
  }
}

/** An operand on the left: a name is the field of that name. */
function field(operand: Operand, fields: Fields): Resolved {
  if (operand.kind === 'literal') return operand.value;
  return fields[operand.name.toLowerCase()] ?? MISSING;
}

/**
 * An operand used as a value: a bare word is the word itself (`== critical`), never a field, so
 * an output that happens to contain `Critical: yes` cannot change what a rule compares against.
 */
function value(operand: Operand, _fields: Fields): FieldValue {
  return operand.kind === 'literal' ? operand.value : operand.name;
}

function truthy(value: Resolved): Truth {
  if (value === MISSING) return null;
  if (typeof value !== 'string') return value !== false && value !== 0;
  return !['', 'false', 'no', '0'].includes(value.trim().toLowerCase());
}

function compare(op: CompareOp, left: FieldValue, right: FieldValue): boolean {
  const a = asNumber(left);
  const b = asNumber(right);
  const order = a !== null && b !== null ? Math.sign(a - b) : textOrder(left, right);
  switch (op) {
    case '==':
      return order === 0;
    case '!=':
      return order !== 0;
    case '>':
      return order > 0;
    case '>=':
      return order >= 0;
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
  }
}

/** A number, or a numeric string such as "85" or "85%". */
function asNumber(value: FieldValue): number | null {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return null;
  const m = /^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?)\s*%?\s*$/i.exec(value);
  return m ? Number(m[1]) : null;
}

function textOrder(left: FieldValue, right: FieldValue): number {
  const a = String(left).trim().toLowerCase();
  const b = String(right).trim().toLowerCase();
  return a === b ? 0 : a < b ? -1 : 1;
}
