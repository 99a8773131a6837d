import { z } from 'zod';
import {
  components,
  type ErrorStatus,
  errorStatuses,
  type JsonResponse,
  type OtherResponse,
  type Route,
  type StreamResponse,
} from './api/define.js';
import { apiRoutes, ErrorBody } from './api/routes.js';

/**
 * The API's OpenAPI 3.1 document, generated from the route declarations (server/api/): the
 * schemas are zod's JSON Schema 2020-12, which OpenAPI 3.1 takes as it is.
 */

type JsonSchema = Record<string, unknown> & {
  properties?: Record<string, JsonSchema>;
  required?: string[];
  description?: string;
};

const ERROR_TEXT: Record<ErrorStatus, string> = {
  400: 'bad request (a missing or malformed field, parameter or body)',
  401: 'not signed by the sender (a tracker webhook whose signature does not match its secret)',
  404: 'no such task, pipeline or agent',
  409: 'the task is not in a state that allows this (or: an agent with that id exists)',
  413: 'the body, or a text in it, is over its limit',
  422: 'the pipeline or script is invalid (agent edits: `diagnostics` of the result, nothing saved)',
};

let built: Record<string, unknown> | undefined;

export function openApiDocument(): Record<string, unknown> {
  built ??= generate(apiRoutes);
  return built;
}

export function generate(routes: readonly Route[]): Record<string, unknown> {
  const { schemaOf, named } = convert(routes);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][route.method] = {
      summary: route.summary,
      ...parameters(route, schemaOf),
      ...(route.body
        ? {
            requestBody: {
              // an empty body is `{}`: the body is optional when `{}` would do
              required: !route.body.safeParse({}).success,
              content: { 'application/json': { schema: schemaOf(route.body) } },
            },
          }
        : {}),
      responses: {
        ...Object.fromEntries(
          Object.entries(route.responses).map(([status, response]) => [
            status,
            { description: response.description, ...contentOf(response, schemaOf) },
          ]),
        ),
        ...Object.fromEntries(
          errorStatuses(route).map((status) => [
            String(status),
            {
              description: ERROR_TEXT[status],
              content: { 'application/json': { schema: schemaOf(ErrorBody) } },
            },
          ]),
        ),
      },
    };
  }
  const document = {
    openapi: '3.1.0',
    info: {
      title: 'troupe',
      version: '1',
      description:
        'Run teams of AI agents. Errors are `{error: {code, message}}`. When the server has a token, send it as `Authorization: Bearer <token>` (or `?token=` for EventSource).',
    },
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer' },
        query: { type: 'apiKey', in: 'query', name: 'token' },
      },
      schemas: named,
    },
    paths,
  };
  const dangling = JSON.stringify(document).match(/#\/components\/schemas\/~\d+/);
  if (dangling) throw new Error(`an unnamed schema is used inside another one (${dangling[0]}): name it`);
  return document;
}

/**
 * Every schema of the routes in one conversion, so that the named ones are `$ref`s to
 * `components.schemas` wherever they occur; the others are written out where they are used.
 */
function convert(routes: readonly Route[]) {
  const registry = z.registry<{ id: string }>();
  for (const [schema, id] of components) registry.add(schema, { id });
  let unnamed = 0;
  const use = (schema: z.ZodType | undefined) => {
    if (schema && !registry.has(schema)) registry.add(schema, { id: `~${unnamed++}` });
  };
  use(ErrorBody);
  for (const route of routes) {
    for (const schema of [route.params, route.query, route.headers, route.body]) use(schema);
    for (const response of Object.values(route.responses)) {
      if ('json' in response) use(response.json);
      if ('frames' in response) use(response.frames);
    }
  }
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    // requests are read as sent (defaults optional); answers have no defaults or transforms
    io: 'input',
    uri: (id) => `#/components/schemas/${id}`,
    override: ({ jsonSchema }) => {
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
    },
  }) as { schemas: Record<string, JsonSchema> };
  for (const schema of Object.values(schemas)) {
    delete schema.$schema;
    delete schema.$id;
  }
  const named = Object.fromEntries(Object.entries(schemas).filter(([id]) => !id.startsWith('~')));
  const schemaOf = (schema: z.ZodType): JsonSchema => {
    const id = registry.get(schema)!.id;
    return id.startsWith('~') ? schemas[id]! : { $ref: `#/components/schemas/${id}` };
  };
  return { schemaOf, named };
}

/**
 * What a response carries. A stream's frames are `x-frame` (one frame's schema, as OpenAPI 3.2's
 * `itemSchema` will say it) and their `event:` names `x-frame-names`.
 */
function contentOf(
  response: JsonResponse | OtherResponse | StreamResponse,
  schemaOf: (schema: z.ZodType) => JsonSchema,
) {
  if ('json' in response) return { content: { 'application/json': { schema: schemaOf(response.json) } } };
  if ('frames' in response) {
    const stream = {
      schema: { type: 'string' },
      'x-frame': schemaOf(response.frames),
      'x-frame-names': response.names,
    };
    return { content: { 'text/event-stream': stream } };
  }
  return response.content ? { content: { [response.content]: { schema: { type: 'string' } } } } : {};
}

/** The path, query and header parameters: one per property of the route's schemas. */
function parameters(route: Route, schemaOf: (schema: z.ZodType) => JsonSchema) {
  const list = (['path', 'query', 'header'] as const).flatMap((place) => {
    const schema = { path: route.params, query: route.query, header: route.headers }[place];
    if (!schema) return [];
    const object = schemaOf(schema);
    return Object.entries(object.properties ?? {}).map(([name, { description, ...property }]) => ({
      name,
      in: place,
      required: place === 'path' || (object.required ?? []).includes(name),
      ...(description ? { description } : {}),
      schema: property,
      // a comma list: ?status=running,waiting
      ...(property.type === 'array' ? { style: 'form', explode: false } : {}),
    }));
  });
  return list.length ? { parameters: list } : {};
}
