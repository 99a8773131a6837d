import { z } from 'zod';

/**
 * How the HTTP API is declared: each route once, with zod schemas for what it takes and what it
 * answers. The routes validate their input with them (server/handle.ts), /api/openapi.json is
 * generated from them (server/openapi.ts) and the dashboard takes its types from them. This
 * folder imports nothing but zod and src/core, so the dashboard's type checker can read it.
 */

/** The schemas the OpenAPI document names under `components.schemas`, with their names. */
export const components = new Map<z.ZodType, string>();

export function named<T extends z.ZodType>(id: string, schema: T): T {
  components.set(schema, id);
  return schema;
}

export interface JsonResponse {
  description: string;
  json: z.ZodType;
}

/** A response that is not JSON (text, a stream), or has no body. */
export interface OtherResponse {
  description: string;
  /** The media type; none: no body. */
  content?: string;
}

/**
 * A stream of Server-Sent Events (`text/event-stream`): each frame one of `frames`, its `event:`
 * name one of `names` (its `data:` is JSON).
 */
export interface StreamResponse {
  description: string;
  frames: z.ZodType;
  names: readonly string[];
}

export type ErrorStatus = 400 | 401 | 404 | 409 | 413 | 422;

export interface Route {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** In Hono's syntax: `/api/tasks/:id`. */
  path: string;
  summary: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  headers?: z.ZodObject;
  /** A JSON object; an empty body is `{}`, so a body every field of which is optional may be left out. */
  body?: z.ZodType;
  responses: Record<number, JsonResponse | OtherResponse | StreamResponse>;
  /** The statuses of the errors it answers on purpose, each `{error: {code, message}}`. */
  errors?: readonly ErrorStatus[];
}

/** The errors a route answers: its own, and 413 for a body over the limit (server/body-limit.ts). */
export function errorStatuses(route: Route): ErrorStatus[] {
  return [...(route.errors ?? []), ...(route.body ? [413 as const] : [])];
}

/** The JSON a route answers with `status` (for the dashboard's types). */
export type Answer<R extends Route, S extends keyof R['responses']> = R['responses'][S] extends {
  json: infer T extends z.ZodType;
}
  ? z.output<T>
  : never;

export function route<const R extends Route>(declared: R): R {
  return declared;
}

export function json<T extends z.ZodType>(description: string, schema: T): { description: string; json: T } {
  return { description, json: schema };
}

/** Text that is not only whitespace. */
export const nonBlank = z.string().regex(/\S/, 'must not be blank');

/** A query value that is a comma list (`?status=running,waiting`): OpenAPI's form style, unexploded. */
export function commaList<T extends z.ZodType>(item: T) {
  return z.preprocess(
    (value) => (typeof value === 'string' ? value.split(',').map((s) => s.trim()) : value),
    z.array(item),
  );
}

/** An integer in a query string. */
export function queryInt(min: number, max: number) {
  return z.coerce.number().int().min(min).max(max);
}

/**
 * An object that also takes other names for some of its fields (aqm's: `description` for
 * `input`); the field's own name wins when both are given.
 */
export function withAliases<T extends z.ZodType>(aliases: Record<string, string>, schema: T) {
  return z.preprocess((value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    const renamed: Record<string, unknown> = { ...value };
    for (const [alias, field] of Object.entries(aliases)) {
      if (renamed[field] == null && renamed[alias] != null) renamed[field] = renamed[alias];
      delete renamed[alias];
    }
    return renamed;
  }, schema);
}
