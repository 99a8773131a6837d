import { createRequire } from 'node:module';
import type { AnySchema, ErrorObject, ValidateFunction } from 'ajv';
import { messageOf } from '../../core/errors.js';

/**
 * JSON Schema validation for `output_schema:` and spec gates, with ajv (zod has no JSON Schema
 * validator). ajv is loaded on first use, synchronously (validate and load are synchronous), so a
 * pipeline that uses neither never pays for it and `troupe --version` stays fast. It stays outside
 * the bundle (rolldown.config.js) and is read from node_modules like better-sqlite3.
 */

interface AjvLike {
  compile(schema: AnySchema): ValidateFunction;
}
type AjvClass = new (options: Record<string, unknown>) => AjvLike;

const requireHere = createRequire(import.meta.url);
const instances = new Map<string, AjvLike>();
const compiled = new Map<string, ValidateFunction>();

/** The draft named by `$schema`: 2020-12 and 2019-09 have their own ajv class, else draft-07. */
function ajvFor(schema: Record<string, unknown>): AjvLike {
  const declared = typeof schema.$schema === 'string' ? schema.$schema : '';
  const module = declared.includes('2020-12')
    ? 'ajv/dist/2020'
    : declared.includes('2019-09')
      ? 'ajv/dist/2019'
      : 'ajv';
  let ajv = instances.get(module);
  if (!ajv) {
    const loaded = requireHere(module) as { default: AjvClass };
    // strict: an unknown keyword (a typo) is an error, not a schema that checks nothing
    ajv = new loaded.default({
      allErrors: true,
      strict: true,
      strictTypes: false,
      strictTuples: false,
      strictRequired: false,
      validateFormats: false,
      logger: false,
    });
    instances.set(module, ajv);
  }
  return ajv;
}

function validator(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    // a schema with an $id can be compiled once per ajv instance only: compile a copy without it
    const { $id: _, ...rest } = schema;
    validate = ajvFor(schema).compile(rest);
    compiled.set(key, validate);
  }
  return validate;
}

/** Why `schema` is not a usable JSON Schema, or null when it is. */
export function schemaProblem(schema: unknown): string | null {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema))
    return 'a JSON Schema is a mapping (such as `{type: object, required: [...]}`)';
  try {
    validator(schema as Record<string, unknown>);
    return null;
  } catch (error) {
    return messageOf(error);
  }
}

/** What is wrong with `value` under `schema`, one line each; [] when it is valid. */
/** Compiles `schema`'s validator now (it is kept), ahead of its first use. */
export function prepareSchema(schema: Record<string, unknown>): void {
  validator(schema);
}

export function schemaErrors(schema: Record<string, unknown>, value: unknown): string[] {
  const validate = validator(schema);
  if (validate(value)) return [];
  return (validate.errors ?? []).map(describeError);
}

function describeError(error: ErrorObject): string {
  // /files/0/path → files[0].path
  const where = error.instancePath
    ? error.instancePath
        .slice(1)
        .split('/')
        .map((part, i) => (/^\d+$/.test(part) ? `[${part}]` : i === 0 ? part : `.${part}`))
        .join('')
    : '(the object)';
  const extra =
    error.keyword === 'additionalProperties'
      ? ` (\`${(error.params as { additionalProperty: string }).additionalProperty}\`)`
      : error.keyword === 'enum'
        ? `: ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
        : '';
  return `${where} ${error.message ?? 'is invalid'}${extra}`;
}
