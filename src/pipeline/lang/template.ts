import { createRequire } from 'node:module';
import type * as Nunjucks from 'nunjucks';
import { TroupeError } from '../../core/errors.js';
import { didYouMean } from '../closest.js';

/**
 * Jinja2 templates (prompts, payloads, gate prompts) rendered with nunjucks the way aqm's
 * SandboxedEnvironment renders them: no autoescape, undefined variables are "" and iterate as
 * empty, reading an attribute of an undefined variable is an error, and one trailing newline of
 * the template is dropped (Jinja's keep_trailing_newline=False). `${{ params.x }}` has become the
 * variable `{{ params.x }}` before any of this runs (pipeline/params.ts), so a value is never code.
 */

export class TemplateError extends TroupeError {
  readonly code = 'template_error';
  constructor(
    readonly where: string,
    readonly detail: string,
  ) {
    super(`${where}: ${detail}`);
  }
}

export function renderTemplate(template: string, vars: Record<string, unknown>, where: string): string {
  const simple = renderSimple(template, vars);
  if (simple !== null) return simple;
  let compiled: Nunjucks.Template;
  try {
    compiled = compileCached(template);
  } catch (error) {
    throw new TemplateError(where, `template syntax error: ${describe(error)}`);
  }
  try {
    return compiled.render(vars);
  } catch (error) {
    throw new TemplateError(where, describe(error));
  }
}

/** The message of the template's syntax error, or null when it compiles. */
export function templateSyntaxError(template: string): string | null {
  if (simpleVariables(template)) return null;
  try {
    compileCached(template);
    return null;
  } catch (error) {
    return describe(error);
  }
}

/**
 * What would fail when the template renders though it parses: a filter or a test nunjucks does not
 * know, a lookup of a key the sandbox refuses (`x.constructor`). Each as "line l, column c: …"
 * (in the template), with a did-you-mean where there is one.
 */
export function templateProblems(template: string): { message: string; hint?: string }[] {
  const simple = simpleParts(template);
  if (simple && !simple.some((part, i) => i % 2 === 1 && part.split('.').some((k) => UNSAFE_KEYS.has(k))))
    return [];
  let root: AstNode;
  try {
    root = nunjucks().internals.parser.parse(jinjaSource(template), [], {});
  } catch {
    return []; // templateSyntaxError reports it
  }
  const { env } = nunjucks();
  const known = (table: 'filters' | 'tests') =>
    Object.keys((env as unknown as Record<typeof table, Record<string, unknown>>)[table]).filter(
      (name) => !name.startsWith('__troupe'),
    );
  const problems: { message: string; hint?: string }[] = [];
  const at = (node: AstNode) => `line ${node.lineno + 1}, column ${node.colno + 1}`;
  const visit = (node: AstNode) => {
    forEachChild(node, visit);
    if (node.typename === 'Filter' || node.typename === 'FilterAsync') {
      const name = node.name as AstNode;
      const filter = String(name.value);
      if (!known('filters').includes(filter))
        problems.push({
          message: `${at(name)}: unknown filter \`${filter}\``,
          hint: didYouMean(filter, known('filters')) ?? `filters: ${known('filters').join(', ')}`,
        });
      for (const attribute of attributeLiterals(node)) {
        const unsafe = unsafeKeyIn(String(attribute.value));
        if (unsafe) problems.push(refusedKey(at(attribute), unsafe));
      }
    } else if (node.typename === 'Is') {
      const right = node.right as AstNode;
      const name = (right.typename === 'FunCall' ? right.name : right) as AstNode;
      const test = String(name.value);
      if (name.typename === 'Symbol' && !known('tests').includes(test))
        problems.push({
          message: `${at(name)}: unknown test \`${test}\``,
          hint: didYouMean(test, known('tests')) ?? `tests: ${known('tests').join(', ')}`,
        });
    } else if (node.typename === 'LookupVal') {
      const key = node.val as AstNode;
      if (key.typename === 'Literal' && UNSAFE_KEYS.has(String(key.value)))
        problems.push(refusedKey(at(key), String(key.value)));
    }
  };
  visit(root);
  return problems;
}

function refusedKey(at: string, key: string): { message: string; hint: string } {
  return {
    message: `${at}: access to \`${key}\` is refused by the sandbox`,
    hint: `templates cannot read ${[...UNSAFE_KEYS].join(', ')}`,
  };
}

/** The literal attribute names a filter call reads (`sum("price")`, `sort(attribute="name")`). */
function attributeLiterals(filter: AstNode): AstNode[] {
  const index = ATTRIBUTE_ARGUMENT.get(String((filter.name as AstNode).value));
  if (index === undefined) return [];
  const [, ...args] = children(filter.args as AstNode);
  const positional = args.filter((arg) => arg.typename !== 'KeywordArgs')[index];
  const named = args
    .filter((arg) => arg.typename === 'KeywordArgs')
    .flatMap(children)
    .filter((pair) => (pair.key as AstNode).value === 'attribute')
    .map((pair) => pair.value as AstNode);
  return [positional, ...named].filter((arg): arg is AstNode => arg?.typename === 'Literal');
}

/**
 * The variables a template reads from its caller, in order of first use: names bound inside it by
 * `{% for %}`, `{% set %}`, macros and imports are left out, and so are the built-in globals.
 * A template that does not parse reads nothing ([]); see templateSyntaxError.
 */
export function referencedVariables(template: string): string[] {
  const simple = simpleVariables(template);
  if (simple) return simple;
  let root: AstNode;
  try {
    root = nunjucks().internals.parser.parse(jinjaSource(template), [], {});
  } catch {
    return [];
  }
  const free = new Set<string>();
  collectFree(root, new Set(), free);
  return [...free].filter((name) => !GLOBAL_NAMES.has(name));
}

// ── simple templates ─────────────────────────────────────────────────────────

/** `{{ name }}` or `{{ name.key.key }}`: a tag that reads one variable and cannot fail to parse. */
const SIMPLE_TAG = /\{\{\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*\}\}/g;
/** Words the parser reads as something other than a variable. */
const KEYWORDS = new Set(['true', 'false', 'none', 'null', 'and', 'or', 'not', 'in', 'is', 'if', 'else']);

/**
 * A template whose only tags are simple `{{ name }}` reads (and whose text has no `{` between
 * them), split into [text, name, text, name, …, text]; null for any other template, which takes
 * nunjucks. Most prompts are of this kind: `troupe validate` seldom loads nunjucks, and a stage
 * seldom renders with it.
 */
function simpleParts(template: string): string[] | null {
  let parts = simpleCache.get(template);
  if (parts === undefined) {
    parts = splitSimple(jinjaSource(template));
    if (simpleCache.size >= CACHE_LIMIT) simpleCache.delete(simpleCache.keys().next().value as string);
    simpleCache.set(template, parts);
  }
  return parts;
}
const simpleCache = new Map<string, string[] | null>();

function splitSimple(source: string): string[] | null {
  const parts: string[] = [];
  let end = 0;
  for (const match of source.matchAll(SIMPLE_TAG)) {
    const text = source.slice(end, match.index);
    if (text.includes('{') || match[1]!.split('.').some((name) => KEYWORDS.has(name))) return null;
    parts.push(text, match[1]!);
    end = match.index + match[0].length;
  }
  const text = source.slice(end);
  if (text.includes('{')) return null;
  parts.push(text);
  return parts;
}

/** The variables of a simple template (see simpleParts), or null. */
function simpleVariables(template: string): string[] | null {
  const parts = simpleParts(template);
  if (!parts) return null;
  const free = new Set<string>();
  for (let i = 1; i < parts.length; i += 2) {
    const name = parts[i]!.split('.')[0]!;
    if (!GLOBAL_NAMES.has(name)) free.add(name);
  }
  return [...free];
}

/**
 * A simple template that reads only variables it is given, by name (no `a.b`: nunjucks guards
 * those), rendered as nunjucks would: null and undefined as "", anything else as String(value).
 * null when it is not such a template.
 */
function renderSimple(template: string, vars: Record<string, unknown>): string | null {
  const parts = simpleParts(template);
  if (!parts) return null;
  let out = parts[0]!;
  for (let i = 1; i < parts.length; i += 2) {
    const name = parts[i]!;
    if (!Object.hasOwn(vars, name)) return null;
    out += `${vars[name] ?? ''}${parts[i + 1]}`;
  }
  return out;
}

// ── compile ──────────────────────────────────────────────────────────────────

interface AstNode {
  readonly typename: string;
  lineno: number;
  colno: number;
  [field: string]: unknown;
}
type NodeClass = new (lineno: number, colno: number, ...fields: unknown[]) => AstNode;

/** The parts of nunjucks its type definitions leave out. */
interface NunjucksInternals {
  parser: { parse(src: string, extensions: unknown[], opts: object): AstNode };
  compiler: {
    Compiler: new (
      name: string,
      throwOnUndefined: boolean,
    ) => { compile(ast: AstNode): void; getCode(): string };
  };
  nodes: Record<'Filter' | 'Symbol' | 'Literal' | 'NodeList', NodeClass>;
}

/** Thrown inside a render; its message already says where. */
class UndefinedAttributeError extends Error {}

const DEFINED_FILTER = '__troupe_defined';
const SAFE_KEY_FILTER = '__troupe_safe_key';
/** What aqm's sandbox is for: no way from a template to `Function` and arbitrary code. */
const UNSAFE_KEYS = new Set([
  'constructor',
  '__proto__',
  'prototype',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
]);

/** The refused key among an attribute path's parts (`a.constructor`), if any. */
function unsafeKeyIn(attribute: string): string | undefined {
  return attribute.split('.').find((key) => UNSAFE_KEYS.has(key));
}

/**
 * The built-in filters that read an attribute a template names (`xs | sum("price")`), and that
 * argument's place after the filtered value; `sort` also takes it as `attribute=`. They read it
 * without nunjucks' lookup, so the sandbox checks it itself.
 */
const ATTRIBUTE_ARGUMENT = new Map([
  ['sum', 0],
  ['join', 1],
  ['sort', 2],
  ['selectattr', 0],
  ['rejectattr', 0],
  ['groupby', 0],
]);

/**
 * The filter's attribute arguments made plain strings (a value that is not is turned into one
 * once, as a property read would, so it cannot name another key later) and checked.
 */
function guardAttributes(filter: string, index: number, args: unknown[]): unknown[] {
  const checked = (attribute: unknown): unknown => {
    if (!attribute || typeof attribute === 'number') return attribute;
    const key = String(attribute);
    const unsafe = unsafeKeyIn(key);
    if (unsafe) throw new UndefinedAttributeError(`filter '${filter}': access to '${unsafe}' is unsafe`);
    return key;
  };
  const isKeywords = (arg: unknown) =>
    typeof arg === 'object' && arg !== null && Object.hasOwn(arg, '__keywords');
  const positional = args.filter((arg) => !isKeywords(arg)).length;
  return args.map((arg, i) => {
    if (isKeywords(arg)) {
      const keywords = arg as Record<string, unknown>;
      return 'attribute' in keywords ? { ...keywords, attribute: checked(keywords.attribute) } : arg;
    }
    return i === index && i < positional ? checked(arg) : arg;
  });
}

const GLOBAL_NAMES = new Set(['range', 'cycler', 'joiner', 'True', 'False', 'None']);

let loaded: { lib: typeof Nunjucks; internals: NunjucksInternals; env: Nunjucks.Environment } | null = null;

/** nunjucks and troupe's environment, loaded on first use (`troupe validate` seldom needs them). */
function nunjucks(): NonNullable<typeof loaded> {
  if (loaded) return loaded;
  const lib = createRequire(import.meta.url)('nunjucks') as typeof Nunjucks;
  const env = new lib.Environment(null, { autoescape: false, throwOnUndefined: false });
  env.addFilter(DEFINED_FILTER, (value: unknown, expression: string, key: string, position: string) => {
    if (value === undefined)
      throw new UndefinedAttributeError(`${position}: '${expression}' is undefined (reading '${key}')`);
    return value;
  });
  env.addFilter(SAFE_KEY_FILTER, (key: unknown, position: string) => {
    if (UNSAFE_KEYS.has(String(key)))
      throw new UndefinedAttributeError(`${position}: access to '${String(key)}' is unsafe`);
    return key;
  });
  for (const [name, index] of ATTRIBUTE_ARGUMENT) {
    const filter = env.getFilter(name) as (this: unknown, ...args: unknown[]) => unknown;
    env.addFilter(name, function (this: unknown, value: unknown, ...args: unknown[]) {
      return filter.call(this, value, ...guardAttributes(name, index, args));
    });
  }
  // Jinja's spellings; nunjucks only knows true/false/none.
  env.addGlobal('True', true);
  env.addGlobal('False', false);
  env.addGlobal('None', null);
  loaded = { lib, internals: lib as unknown as NunjucksInternals, env };
  return loaded;
}

const CACHE_LIMIT = 500;
const cache = new Map<string, Nunjucks.Template>();

function compileCached(template: string): Nunjucks.Template {
  const hit = cache.get(template);
  if (hit) {
    cache.delete(template); // re-insert: the Map's order is the eviction order
    cache.set(template, hit);
    return hit;
  }
  const compiled = compile(template);
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(template, compiled);
  return compiled;
}

function compile(template: string): Nunjucks.Template {
  const { lib, internals, env } = nunjucks();
  const root = internals.parser.parse(jinjaSource(template), [], {});
  guardLookups(root);
  const compiler = new internals.compiler.Compiler('', false);
  compiler.compile(root);
  const props = new Function(compiler.getCode())();
  return new lib.Template({ type: 'code', obj: props } as unknown as string, env, undefined, true);
}

/** Jinja's lexer reads lines: newlines are normalised and one trailing newline is dropped. */
function jinjaSource(template: string): string {
  return template.replace(/\r\n?/g, '\n').replace(/\n$/, '');
}

/**
 * nunjucks reads `x.y` of an undefined `x` as undefined; Jinja raises. Every lookup's target goes
 * through a filter that throws on undefined (null, like Python's None, still reads as ""), and its
 * key through one that refuses the keys that lead out of the sandbox.
 */
function guardLookups(node: AstNode): void {
  forEachChild(node, guardLookups);
  if (node.typename !== 'LookupVal') return;
  const target = node.target as AstNode;
  const key = node.val as AstNode;
  const start = leftmost(target);
  const position = `line ${start.lineno + 1}, column ${start.colno + 1}`;
  node.target = filterCall(DEFINED_FILTER, target, expressionText(target), expressionText(key), position);
  node.val = filterCall(SAFE_KEY_FILTER, key, position);
}

function filterCall(filter: string, value: AstNode, ...literals: string[]): AstNode {
  const { Filter, Literal, NodeList, Symbol: SymbolNode } = nunjucks().internals.nodes;
  const { lineno, colno } = value;
  const args = [value, ...literals.map((literal) => new Literal(lineno, colno, literal))];
  return new Filter(lineno, colno, new SymbolNode(lineno, colno, filter), new NodeList(lineno, colno, args));
}

/** The source text of a lookup, for messages; sees through the guards already added inside it. */
function expressionText(node: AstNode): string {
  switch (node.typename) {
    case 'Symbol':
    case 'Literal':
      return String(node.value);
    case 'LookupVal': {
      const key = node.val as AstNode;
      const keyText = expressionText(key);
      const literal = (isGuard(key) ? children(key.args as AstNode)[0] : key)?.typename === 'Literal';
      return `${expressionText(node.target as AstNode)}${literal ? `.${keyText}` : `[${keyText}]`}`;
    }
    case 'Filter':
      return isGuard(node) ? expressionText(children(node.args as AstNode)[0] as AstNode) : '(expression)';
    default:
      return '(expression)';
  }
}

/** Where `a.b.c` starts: nunjucks places a lookup at its dot. */
function leftmost(node: AstNode): AstNode {
  if (node.typename === 'LookupVal') return leftmost(node.target as AstNode);
  if (isGuard(node)) return leftmost(children(node.args as AstNode)[0] as AstNode);
  return node;
}

function isGuard(node: AstNode): boolean {
  const name = (node.name as AstNode | undefined)?.value;
  return node.typename === 'Filter' && (name === DEFINED_FILTER || name === SAFE_KEY_FILTER);
}

// ── free variables ───────────────────────────────────────────────────────────

/**
 * Walks the template in evaluation order with the names bound at each point. Jinja scoping:
 * `for` and macro bodies get their own scope, `if` does not, `set` binds from there on.
 */
function collectFree(node: AstNode | null, bound: Set<string>, free: Set<string>): void {
  if (!node) return;
  const walk = (child: unknown, scope = bound) => collectFree(child as AstNode | null, scope, free);
  switch (node.typename) {
    case 'Symbol':
      if (!bound.has(node.value as string)) free.add(node.value as string);
      return;
    case 'For':
    case 'AsyncEach':
    case 'AsyncAll': {
      walk(node.arr);
      walk(node.body, new Set([...bound, 'loop', ...symbolNames(node.name as AstNode)]));
      walk(node.else_);
      return;
    }
    case 'Set':
      walk(node.value);
      walk(node.body);
      for (const target of node.targets as AstNode[]) bound.add(target.value as string);
      return;
    case 'Macro':
    case 'Caller': {
      if (node.typename === 'Macro') bound.add((node.name as AstNode).value as string);
      const params = new Set([...bound, 'caller', 'varargs', 'kwargs']);
      for (const arg of children(node.args as AstNode)) {
        if (arg.typename === 'KeywordArgs') {
          for (const pair of children(arg)) {
            walk(pair.value);
            params.add((pair.key as AstNode).value as string);
          }
        } else params.add(arg.value as string);
      }
      walk(node.body, params);
      return;
    }
    case 'Pair':
      // `{a: 1}` and `f(a=1)`: a bare-word key is a name, not a read.
      if ((node.key as AstNode).typename !== 'Symbol') walk(node.key);
      walk(node.value);
      return;
    case 'Filter':
    case 'FilterAsync':
      walk(node.args);
      return;
    case 'Is': {
      // `x is divisibleby(n)`: the test's name is not a variable, its arguments are.
      walk(node.left);
      const test = node.right as AstNode;
      if (test.typename === 'FunCall') walk(test.args);
      return;
    }
    case 'Import':
      walk(node.template);
      bound.add((node.target as AstNode).value as string);
      return;
    case 'FromImport':
      walk(node.template);
      for (const name of children(node.names as AstNode)) {
        const alias = name.typename === 'Pair' ? (name.value as AstNode) : name;
        bound.add(alias.value as string);
      }
      return;
    case 'Block':
      walk(node.body);
      return;
    default:
      forEachChild(node, (child) => walk(child));
  }
}

function symbolNames(node: AstNode): string[] {
  return node.typename === 'Symbol' ? [node.value as string] : children(node).map((n) => n.value as string);
}

// ── AST helpers ──────────────────────────────────────────────────────────────

function isNode(value: unknown): value is AstNode {
  return typeof value === 'object' && value !== null && 'typename' in value;
}

function children(list: AstNode): AstNode[] {
  return (list.children as AstNode[] | undefined) ?? [];
}

/** Own properties, not only `fields`: a block `{% set %}` keeps its body outside them. */
function forEachChild(node: AstNode, visit: (child: AstNode) => void): void {
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) {
      for (const item of value) if (isNode(item)) visit(item);
    } else if (isNode(value)) visit(value);
  }
}

// ── errors ───────────────────────────────────────────────────────────────────

/** One line: nunjucks' messages start with "(unknown path) [Line l, Column c]\n  Error: ". */
function describe(error: unknown): string {
  const { message: raw, lineno, colno, cause } = error as Error & { lineno?: number; colno?: number };
  if (cause instanceof UndefinedAttributeError) return cause.message;
  const message = raw
    .replace(/\(unknown path\)( \[Line \d+, Column \d+\])?\s*/g, '')
    .replace(/^(Error|Template render error): /, '')
    .replace(/\s+/g, ' ')
    .trim();
  return lineno ? `line ${lineno}, column ${colno ?? 0}: ${message}` : message;
}
