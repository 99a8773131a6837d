import type { Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../core/nesting.js';
import type { JsonResponse, Route } from './api/define.js';
import { badRequest } from './errors.js';

type Parsed<S> = S extends z.ZodType ? z.output<S> : Record<string, never>;
type JsonStatus<R extends Route> = {
  [S in keyof R['responses']]: R['responses'][S] extends JsonResponse ? S : never;
}[keyof R['responses']] &
  number;
type JsonBody<R extends Route, S extends keyof R['responses']> = R['responses'][S] extends {
  json: infer T extends z.ZodType;
}
  ? z.input<T>
  : never;

/** A request's input, parsed with its route's schemas. */
export interface RouteInput<R extends Route> {
  params: Parsed<R extends { params: infer P } ? P : undefined>;
  query: Parsed<R extends { query: infer Q } ? Q : undefined>;
  headers: Parsed<R extends { headers: infer H } ? H : undefined>;
  body: Parsed<R extends { body: infer B } ? B : undefined>;
  /** A JSON answer under one of the route's statuses, in the shape declared for it. */
  reply<S extends JsonStatus<R>>(status: S, body: JsonBody<R, S>): Response;
}

/**
 * Serves a declared route: its method and path, its input validated (a 400 `bad_request` naming
 * the first field that is wrong), its JSON answers typed by their schemas. Answers are not
 * validated here: the tests parse every one with its schema.
 */
export function handle<R extends Route>(
  app: Hono,
  route: R,
  fn: (input: RouteInput<R>, c: Context) => Response | Promise<Response>,
): void {
  app.on(route.method.toUpperCase(), route.path, async (c) => {
    const input = {
      params: route.params ? parse(route.params, c.req.param(), 'path') : {},
      query: route.query ? parse(route.query, present(c.req.query()), 'query') : {},
      headers: route.headers ? parse(route.headers, c.req.header(), 'header') : {},
      body: route.body ? parse(route.body, await jsonBody(c), 'body') : {},
      reply: (status: number, body: unknown) => c.json(body, status as ContentfulStatusCode),
    };
    return fn(input as RouteInput<R>, c);
  });
}

type Place = 'path' | 'query' | 'header' | 'body';

function parse(schema: z.ZodType, value: unknown, place: Place): unknown {
  const result = schema.safeParse(value, {
    error: (issue) => (issue.input === undefined ? 'is required' : undefined),
  });
  if (result.success) return result.data;
  const [first, ...more] = result.error.issues;
  const where =
    place === 'body'
      ? first!.path.join('.') || 'the body'
      : `${place === 'query' ? '?' : `${place} `}${String(first!.path[0] ?? '')}`;
  throw badRequest(`${where}: ${first!.message}${more.length ? ` (and ${more.length} more)` : ''}`);
}

/** `?limit=` says nothing: as if it were not there. */
function present(query: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== ''));
}

/**
 * The JSON body; an empty body is `{}`. JSON.parse takes any depth, but the schemas and the
 * handlers recurse: a body nested deeper than MAX_JSON_DEPTH is refused before they see it.
 */
async function jsonBody(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (!text.trim()) return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badRequest('the body is not valid JSON');
  }
  if (nestsDeeperThan(body, MAX_JSON_DEPTH))
    throw badRequest(`the body nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays`);
  return body;
}
