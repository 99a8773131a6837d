import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { project } from '../../test/support/troupe.js';
import { loadProjectConfig } from '../pipeline/config.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { errorStatuses, type Route } from './api/define.js';
import { apiRoutes, ErrorBody } from './api/routes.js';
import { createApp, type TroupeApp } from './app.js';

/**
 * Hostile bodies for every route that takes one (docs/security.md): whatever JSON, or not-JSON,
 * arrives, the server answers a status its route declares — never a 500 — with the declared
 * error body, and it keeps answering. `TROUPE_FUZZ_RUNS=<n>` and `TROUPE_FUZZ_SEED=<n>` hunt longer.
 */

const RUNS = Number(process.env.TROUPE_FUZZ_RUNS ?? 25);
const SEED = Number(process.env.TROUPE_FUZZ_SEED ?? 28);

// a scripted pipeline only: a body that happens to be a valid run starts nothing that reaches out
const offline = 'agents:\n  - id: solo\n    runtime: scripted\n';

let root: string;
let served: TroupeApp;

beforeAll(() => {
  root = project({
    '.troupe/config.yaml': 'default_pipeline: offline\n',
    '.troupe/pipelines/offline.yaml': offline,
  });
  const store = openSqliteStore(path.join(root, '.troupe', 'troupe.db'));
  served = createApp({ project: { root, store, config: loadProjectConfig(root) }, pollMs: 10 });
  served.start();
});
afterAll(async () => {
  served.stop();
  await served.ctx.runner.drain(2000);
  served.ctx.store.close();
});

/** Values a careless or hostile client sends: the route's own field names with any JSON in them. */
const FIELD = fc.constantFrom(
  'input',
  'pipeline',
  'script',
  'params',
  'reason',
  'response',
  'content',
  'agent',
  'to',
  'body',
  'thread',
  'kind',
  'priority',
  'id',
  'via',
  '__proto__',
  'constructor',
);
const VALUE = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('../../etc/passwd', '{{ 7*7 }}', '$(id)', '\u0000', 'a'.repeat(5000)),
);
// JSON nested far past any schema's depth, whole or under a field (the red team's L7)
const DEEP = fc
  .tuple(FIELD, fc.integer({ min: 101, max: 400_000 }), fc.boolean())
  .map(([field, depth, scripted]) => {
    const deep = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    return scripted ? `{"input":"x","script":{"agents":{"a":${deep}}}}` : `{"${field}":${deep}}`;
  });
const BODY = fc.oneof(
  fc.dictionary(FIELD, VALUE, { maxKeys: 5 }),
  DEEP,
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom('{', 'null', '[]', '"x"', '{"input":', '\u0000'),
);
const SEGMENT = fc.constantFrom('T-000000', 'nope', '..', '%2e%2e', 'C-001', 'a b');

const withBody = apiRoutes.filter((r) => r.body !== undefined);

async function send(route: Route, segment: string, body: unknown): Promise<Response> {
  const url = route.path.replace(/:\w+/g, encodeURIComponent(segment));
  return served.app.request(url, {
    method: route.method.toUpperCase(),
    headers: { Host: '127.0.0.1:8000', 'Content-Type': 'application/json' },
    // strings are sent as written (broken or deep JSON); anything else as its JSON
    body: typeof body === 'string' && !body.startsWith('"') ? body : JSON.stringify(body),
  });
}

describe('the HTTP API under hostile bodies', () => {
  it.each(withBody.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))(
    '%s answers what it declares, never a 500',
    async (_name, route) => {
      await fc.assert(
        fc.asyncProperty(SEGMENT, BODY, async (segment, body) => {
          const response = await send(route, segment, body);
          const status = response.status;
          expect(status, `${route.method} ${route.path} ${JSON.stringify(body)?.slice(0, 200)}`).toBeLessThan(
            500,
          );
          // a path that names no route once the URL is resolved (`..`) gets the server's own 404
          const declared =
            route.responses[status] !== undefined ||
            errorStatuses(route).some((s) => s === status) ||
            status === 404;
          expect(declared, `${status} is not declared for ${route.path}`).toBe(true);
          if (status >= 400) expect(ErrorBody.safeParse(await response.json()).success).toBe(true);
          else await response.body?.cancel();
        }),
        { numRuns: RUNS, seed: SEED },
      );
    },
  );
});
