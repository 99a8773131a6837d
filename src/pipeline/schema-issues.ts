import type { z } from 'zod';
import { didYouMean } from './closest.js';
import type { DiagnosticSink } from './diagnostics.js';
import type { Path, YamlSource } from './yaml-source.js';

type Issue = z.core.$ZodIssue;
interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  valueType?: z.ZodType;
}

/**
 * Parses `value` (found at `base` in `source`) with `schema`. Each zod issue becomes a diagnostic
 * at the YAML node concerned, worded for someone editing YAML rather than for a programmer.
 */
export function checkSchema<T>(
  schema: z.ZodType<T>,
  value: unknown,
  source: YamlSource,
  base: Path,
  sink: DiagnosticSink,
): T | undefined {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const reporter = new IssueReporter(schema, value, source, base, sink);
  for (const issue of result.error.issues) reporter.report(issue, []);
  return undefined;
}

/** Readable path: `agents[1].gate.max_retries`. */
function pathLabel(path: Path): string {
  return path.reduce<string>(
    (label, part) => (typeof part === 'number' ? `${label}[${part}]` : label ? `${label}.${part}` : part),
    '',
  );
}

class IssueReporter {
  constructor(
    private readonly schema: z.ZodType,
    private readonly root: unknown,
    private readonly source: YamlSource,
    private readonly base: Path,
    private readonly sink: DiagnosticSink,
  ) {}

  report(issue: Issue, prefix: Path): void {
    const local = [...prefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    const full = [...this.base, ...local];
    const label = `\`${pathLabel(full) || 'document'}\``;
    const value = valueAt(this.root, local);
    const at = this.source.position(full);
    switch (issue.code) {
      case 'unrecognized_keys': {
        const known = fieldsAt(this.schema, local, this.root) ?? [];
        for (const key of issue.keys) {
          const hint =
            didYouMean(key, known) ?? (known.length ? `allowed here: ${known.join(', ')}` : undefined);
          this.sink.error(this.source.keyPosition(full, key), `unknown field \`${key}\` in ${label}`, hint);
        }
        return;
      }
      case 'invalid_union': {
        // A mapping given for a `string | mapping` field: report the mapping's own problems.
        const branch = issue.errors.length ? deepBranch(issue.errors) : undefined;
        if (branch) for (const inner of branch) this.report(inner, local);
        else this.sink.error(at, `${label}: ${issue.message}`);
        return;
      }
      case 'invalid_type':
        if (value === undefined) {
          const field = String(local.at(-1));
          this.sink.error(at, `missing required field \`${field}\``, `add \`${field}:\` here`);
        } else {
          this.sink.error(
            at,
            `${label} must be ${expected(issue.expected)}, not ${describe(value)}`,
            typeHint(issue.expected, value),
          );
        }
        return;
      case 'invalid_value': {
        const options = issue.values.map(String);
        const hint = typeof value === 'string' ? didYouMean(value, options) : undefined;
        this.sink.error(at, `${label} must be one of ${options.join(', ')}, not ${describe(value)}`, hint);
        return;
      }
      case 'too_small':
        this.sink.error(
          at,
          `${label} ${bound(issue.origin, 'least', Number(issue.minimum), issue.inclusive)}`,
        );
        return;
      case 'too_big':
        this.sink.error(
          at,
          `${label} ${bound(issue.origin, 'most', Number(issue.maximum), issue.inclusive)}`,
        );
        return;
      case 'invalid_key': {
        const key = String(local.at(-1));
        const reason = issue.issues[0]?.message ?? issue.message;
        this.sink.error(this.source.keyPosition(full.slice(0, -1), key), `invalid key \`${key}\`: ${reason}`);
        return;
      }
      default:
        this.sink.error(at, `${label}: ${issue.message}`);
    }
  }
}

/** The one union branch that got past the type check, if exactly one did. */
function deepBranch(branches: Issue[][]): Issue[] | undefined {
  const deep = branches.filter(
    (issues) =>
      !issues.every((i) => i.path.length === 0 && (i.code === 'invalid_type' || i.code === 'invalid_value')),
  );
  return deep.length === 1 ? deep[0] : undefined;
}

function bound(origin: string, side: 'least' | 'most', limit: number, inclusive = true): string {
  if (origin === 'array') return `needs at ${side} ${limit} item${limit === 1 ? '' : 's'}`;
  if (origin === 'string')
    return limit === 1 && side === 'least' ? 'must not be empty' : `length must be at ${side} ${limit}`;
  const op = side === 'least' ? (inclusive ? '>=' : '>') : inclusive ? '<=' : '<';
  return `must be ${op} ${limit}`;
}

function expected(type: string): string {
  const names: Record<string, string> = {
    object: 'a mapping',
    array: 'a list',
    int: 'a whole number',
    boolean: 'true or false',
  };
  return names[type] ?? `a ${type}`;
}

/** How to fix the commonest mistakes: a quoted number, an unquoted word where a list goes, … */
function typeHint(type: string, value: unknown): string | undefined {
  if (type === 'object') return 'write it as `key: value` lines indented below it, or `{ key: value }`';
  if (type === 'array') return 'write it as `[a, b]`, or as `- item` lines indented below it';
  if (typeof value !== 'string') return type === 'string' ? 'put the value in quotes' : undefined;
  if ((type === 'number' || type === 'int') && value.trim() !== '' && Number.isFinite(Number(value))) {
    return 'write the number without quotes';
  }
  if (type === 'boolean' && /^(true|false)$/i.test(value)) return 'write true or false without quotes';
  return undefined;
}

function describe(value: unknown): string {
  if (value === null) return 'empty (null)';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return String(value);
}

function valueAt(root: unknown, path: Path): unknown {
  let value = root;
  for (const part of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string | number, unknown>)[part];
  }
  return value;
}

/** The field names the schema allows for the mapping at `path`, for "did you mean" hints. */
function fieldsAt(schema: z.ZodType, path: Path, root: unknown): string[] | undefined {
  let current: z.ZodType | undefined = schema;
  let value = root;
  for (const part of path) {
    current = pick(current, value);
    const def: Def | undefined = current && defOf(current);
    if (def?.type === 'object') current = def.shape?.[String(part)];
    else if (def?.type === 'array') current = def.element;
    else if (def?.type === 'record') current = def.valueType;
    else return undefined;
    value = valueAt(value, [part]);
  }
  const last = pick(current, value);
  const shape = last && defOf(last).shape;
  return shape ? Object.keys(shape) : undefined;
}

/** Unwraps optional/nullable and picks the union member matching the value's YAML kind. */
function pick(schema: z.ZodType | undefined, value: unknown): z.ZodType | undefined {
  let current = schema;
  while (current && defOf(current).innerType) current = defOf(current).innerType;
  const options = current && defOf(current).options;
  if (!options) return current;
  const kind = Array.isArray(value) ? 'array' : 'object';
  return options.map((o) => pick(o, value)).find((o) => o && defOf(o).type === kind);
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}
