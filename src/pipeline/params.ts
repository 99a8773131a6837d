import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../core/errors.js';
import { paramEnvName } from '../core/param-env.js';
import type { ParamDefinition } from '../core/pipeline.js';
import { didYouMean } from './closest.js';
import type { DiagnosticSink } from './diagnostics.js';
import { findProjectRoot } from './discover.js';
import type { RawParams } from './schema.js';
import { type Path, YamlSource } from './yaml-source.js';

/** Expands the bare-value shorthand (`model: opus`), taking the type from the value. */
export function paramDefinitions(raw: RawParams | null | undefined): Record<string, ParamDefinition> {
  const defs: Record<string, ParamDefinition> = {};
  for (const [name, def] of Object.entries(raw ?? {})) {
    defs[name] =
      def !== null && typeof def === 'object'
        ? {
            type: def.type ?? 'string',
            default: def.default ?? null,
            required: def.required ?? false,
            description: def.description ?? '',
            prompt: def.prompt ?? null,
            auto_detect: def.auto_detect ?? null,
          }
        : {
            type: typeof def === 'number' ? 'number' : typeof def === 'boolean' ? 'boolean' : 'string',
            default: def,
            required: false,
            description: '',
            prompt: null,
            auto_detect: null,
          };
  }
  return defs;
}

type Coerced = { ok: true; value: unknown } | { ok: false; message: string };

/** A value of the param's declared type; strings from flags and files are parsed as aqm does. */
export function coerceParam(def: ParamDefinition, value: unknown): Coerced {
  if (value === null || value === undefined) return { ok: true, value: null };
  if (def.type === 'string') {
    return typeof value === 'object'
      ? { ok: false, message: 'expected a string' }
      : { ok: true, value: String(value) };
  }
  if (typeof value === def.type) return { ok: true, value };
  if (typeof value !== 'string')
    return { ok: false, message: `expected a ${def.type}, not ${JSON.stringify(value)}` };
  const text = value.trim();
  if (def.type === 'number') {
    const number = Number(text);
    return text !== '' && Number.isFinite(number)
      ? { ok: true, value: number }
      : { ok: false, message: `expected a number, not "${value}"` };
  }
  const lower = text.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(lower)) return { ok: true, value: true };
  if (['false', '0', 'no', 'off'].includes(lower)) return { ok: true, value: false };
  return { ok: false, message: `expected a boolean (true/false, yes/no, 1/0), not "${value}"` };
}

export interface ParamsFile {
  source: YamlSource;
  values: Record<string, unknown>;
  /** Given with --params-file (its unknown names are worth a warning; a shared file's are not). */
  explicit: boolean;
}

export interface ParamInputs {
  cli: Record<string, string>;
  file: ParamsFile | undefined;
  /** validate checks a pipeline before anyone supplies its required params. */
  requireValues: boolean;
}

/** Resolved values: `--param` beats the params file beats the default. */
export function resolveParams(
  defs: Record<string, ParamDefinition>,
  inputs: ParamInputs,
  source: YamlSource,
  sink: DiagnosticSink,
): Record<string, unknown> {
  const names = Object.keys(defs);
  // a command gate reads each param from one variable: two params must not share it
  const byVariable = new Map<string, string>();
  for (const name of names) {
    const variable = paramEnvName(name);
    const first = byVariable.get(variable);
    if (first === undefined) byVariable.set(variable, name);
    else
      sink.error(
        source.keyPosition(['params'], name),
        `params \`${first}\` and \`${name}\` would both be ${variable} in a command gate`,
        'rename one of them',
      );
  }
  for (const name of Object.keys(inputs.cli)) {
    if (!(name in defs)) {
      sink.error(
        source.keyPosition([], 'params'),
        `unknown param \`${name}\` given with --param`,
        didYouMean(name, names) ?? declaredHint(names),
      );
    }
  }
  if (inputs.file?.explicit) {
    for (const name of Object.keys(inputs.file.values)) {
      if (!(name in defs)) {
        const hint = didYouMean(name, names) ?? declaredHint(names);
        sink.warning(
          inputs.file.source.keyPosition([], name),
          `the pipeline declares no param \`${name}\``,
          hint,
        );
      }
    }
  }

  const values: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(defs)) {
    const [raw, at] =
      name in inputs.cli
        ? [inputs.cli[name], () => source.keyPosition(['params'], name)]
        : inputs.file && name in inputs.file.values
          ? [inputs.file.values[name], () => inputs.file!.source.position([name])]
          : [def.default, () => source.position(['params', name, 'default'])];
    const coerced = coerceParam(def, raw);
    if (!coerced.ok) {
      sink.error(
        at(),
        `param \`${name}\`: ${coerced.message}`,
        `\`${name}\` is declared with type ${def.type}`,
      );
      values[name] = neutral(def);
    } else if (coerced.value === null && def.required) {
      if (inputs.requireValues) {
        sink.error(
          source.keyPosition(['params'], name),
          `required param \`${name}\` has no value`,
          `--param ${name}=value`,
        );
      }
      values[name] = neutral(def);
    } else {
      values[name] = coerced.value;
    }
  }
  return values;
}

function declaredHint(names: string[]): string {
  return names.length ? `declared params: ${names.join(', ')}` : 'the pipeline declares no params';
}

function neutral(def: ParamDefinition): unknown {
  return def.type === 'number' ? 0 : def.type === 'boolean' ? false : '';
}

const PLACEHOLDER = /\$\{\{([^}]*)\}\}/g;
const WHOLE_PLACEHOLDER = /^\$\{\{([^}]*)\}\}$/;
const PLACEHOLDER_HERE = /\$\{\{([^}]*)\}\}/y;
const PARAM_REFERENCE = /^\s*params\.([A-Za-z_][A-Za-z0-9_-]*)\s*$/;

export interface SubstitutionReport {
  error(at: Path, message: string, hint?: string): void;
  /** `written`: the placeholder as written, to point at it inside its string. */
  warning(at: Path, written: string, message: string, hint?: string): void;
}

/**
 * What a string of the pipeline is to whoever reads it: a template (a param becomes a template
 * variable, so its value is never parsed as template code), a gate's shell command (a param
 * becomes an environment variable, never shell text), or plain text (the value itself).
 */
type FieldKind = 'template' | 'shell' | 'text';

function fieldKind(at: Path): FieldKind {
  const [key, parent, grandparent] = [at.at(-1), at.at(-2), at.at(-3)];
  if (key === 'system_prompt') return 'template';
  if (parent === 'gate' && key === 'prompt') return 'template';
  if (grandparent === 'handoffs' && key === 'payload') return 'template';
  if (parent === 'gate' && key === 'command') return 'shell';
  return 'text';
}

/**
 * Replaces `${{ params.X }}` in every string of `value`, before any template runs. A string that
 * is only a placeholder takes the param's own type, so `max_rounds: ${{ params.rounds }}` stays a
 * number. In templates and gate commands the value is data: see FieldKind.
 */
export function substituteParams(
  value: unknown,
  params: Record<string, unknown>,
  report: SubstitutionReport,
  at: Path = [],
): unknown {
  if (typeof value === 'string') return substituteString(value, params, report, at);
  if (Array.isArray(value)) return value.map((item, i) => substituteParams(item, params, report, [...at, i]));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, substituteParams(v, params, report, [...at, k])]),
    );
  }
  return value;
}

function substituteString(
  text: string,
  params: Record<string, unknown>,
  report: SubstitutionReport,
  at: Path,
): unknown {
  const paramName = (inner: string): string | undefined => {
    const name = PARAM_REFERENCE.exec(inner)?.[1];
    if (name === undefined) {
      report.error(
        at,
        `\`\${{${inner}}}\` is not a param reference: only \`\${{ params.NAME }}\` is substituted`,
        `for a template variable write \`{{${inner}}}\``,
      );
      return undefined;
    }
    if (!(name in params)) {
      const hint = didYouMean(name, Object.keys(params)) ?? `declare it under \`params:\``;
      report.error(at, `unknown param \`${name}\``, hint);
      return undefined;
    }
    return name;
  };
  const kind = fieldKind(at);
  if (kind === 'template') return templateWithParams(text, paramName);
  if (kind === 'shell') {
    return shellWithParams(text, (written, inner) => {
      const name = paramName(inner);
      if (name === undefined) return undefined;
      const variable = paramEnvName(name);
      report.warning(
        at,
        written,
        `param \`${name}\` in a shell command: the gate reads it from the environment variable ${variable}, never as shell text`,
        `write "$${variable}" where the value belongs`,
      );
      return variable;
    });
  }
  const lookup = (inner: string): unknown => {
    const name = paramName(inner);
    return name === undefined ? '' : (params[name] ?? '');
  };
  const whole = WHOLE_PLACEHOLDER.exec(text);
  if (whole) return lookup(whole[1]!);
  return text.replace(PLACEHOLDER, (_, inner: string) => String(lookup(inner)));
}

/** The placeholder written at `index` of `text`, if one is. */
function placeholderAt(text: string, index: number): RegExpExecArray | null {
  PLACEHOLDER_HERE.lastIndex = index;
  return PLACEHOLDER_HERE.exec(text);
}

const TAG_CLOSERS: Record<string, string> = { '{{': '}}', '{%': '%}', '{#': '#}' };

/**
 * `${{ params.x }}` as the template variable `{{ params.x }}`; inside a tag (`{% if "${{ params.x }}"
 * == "y" %}`) as the expression `params.x`, the quotes around it dropped.
 */
function templateWithParams(text: string, paramName: (inner: string) => string | undefined): string {
  let out = '';
  let closer: string | undefined;
  let i = 0;
  while (i < text.length) {
    const placeholder = placeholderAt(text, i);
    if (placeholder) {
      const name = paramName(placeholder[1]!);
      i += placeholder[0].length;
      if (closer === undefined) {
        if (name !== undefined) out += `{{ ${paramExpression(name)} }}`;
        continue;
      }
      const quote = out.at(-1);
      if ((quote === '"' || quote === "'") && text[i] === quote) {
        out = out.slice(0, -1);
        i += 1;
      }
      out += name === undefined ? '""' : paramExpression(name);
      continue;
    }
    const pair = text.slice(i, i + 2);
    if (closer === undefined && pair in TAG_CLOSERS) closer = TAG_CLOSERS[pair];
    else if (pair === closer) closer = undefined;
    else {
      out += text[i];
      i += 1;
      continue;
    }
    out += pair;
    i += 2;
  }
  return out;
}

function paramExpression(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? `params.${name}` : `params[${JSON.stringify(name)}]`;
}

/**
 * `${{ params.x }}` in a shell command as a quoted reference to the variable `variable(…)` names,
 * whatever quotes it stands in: `"$V"` outside quotes, `${V}` in double quotes, `'"$V"'` in single
 * quotes. The value never becomes shell text, so no value can end the command or start another.
 */
function shellWithParams(
  text: string,
  variable: (written: string, inner: string) => string | undefined,
): string {
  let out = '';
  let quote: '"' | "'" | undefined;
  let i = 0;
  while (i < text.length) {
    const placeholder = placeholderAt(text, i);
    if (placeholder) {
      const name = variable(placeholder[0], placeholder[1]!);
      i += placeholder[0].length;
      if (name !== undefined)
        out += quote === '"' ? `\${${name}}` : quote === "'" ? `'"$${name}"'` : `"$${name}"`;
      continue;
    }
    const c = text[i]!;
    out += c;
    i += 1;
    // a backslash escapes what follows, a placeholder too (`\${{ params.x }}` is left as written)
    if (c === '\\' && quote !== "'") {
      if (i < text.length) out += text[i++];
    } else if (quote === undefined && (c === '"' || c === "'")) quote = c;
    else if (c === quote) quote = undefined;
  }
  return out;
}

/**
 * Where param values come from when no --params-file is given: next to the pipeline, then the
 * project's `.troupe/params.yaml` or `.aqm/params.yaml` (aqm looked in `.aqm/.aqm/` for pipelines
 * kept in `.aqm/pipelines/`, so its project params file was never found there).
 */
export function findParamsFile(
  pipelineFile: string,
  explicit?: string,
): { file: string; explicit: boolean } | undefined {
  if (explicit !== undefined) {
    const file = path.resolve(explicit);
    if (!existsSync(file)) throw new UsageError(`params file not found: ${explicit}`);
    return { file, explicit: true };
  }
  const dir = path.dirname(path.resolve(pipelineFile));
  const root = findProjectRoot(dir);
  const candidates = [
    path.join(dir, 'params.yaml'),
    path.join(root, '.troupe', 'params.yaml'),
    path.join(root, '.aqm', 'params.yaml'),
  ];
  const file = candidates.find((candidate) => existsSync(candidate));
  return file ? { file, explicit: false } : undefined;
}

/** Reads a params file: a mapping of name to value. */
export function readParamsFile(
  found: { file: string; explicit: boolean },
  sink: DiagnosticSink,
): ParamsFile | undefined {
  const source = YamlSource.parse(found.file, readFileSync(found.file, 'utf8'), sink);
  if (!source) return undefined;
  const values = source.value() ?? {};
  if (typeof values !== 'object' || Array.isArray(values)) {
    sink.error(source.position([]), 'a params file must be a mapping of param name to value', 'model: opus');
    return undefined;
  }
  return { source, values: values as Record<string, unknown>, explicit: found.explicit };
}
