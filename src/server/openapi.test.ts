import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TASK_EVENT_TYPES, TASK_STATUSES } from '../core/events.js';
import { defaultConfig } from '../pipeline/config.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { AQM_FRAME_NAMES, LIVE_EVENT_NAMES } from './api/live-events.js';
import { createApp } from './app.js';
import { openApiDocument } from './openapi.js';

type Operation = {
  parameters?: { name: string; in: string; schema: unknown; style?: string }[];
  responses: Record<string, { content?: Record<string, Record<string, unknown>> }>;
};
type FrameSchema = { properties: { event: { enum?: string[]; const?: string }; id?: unknown } };
const doc = openApiDocument() as {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
};

function app() {
  const root = mkdtempSync(path.join(tmpdir(), 'troupe-openapi-'));
  return createApp({
    project: { root, store: openSqliteStore(path.join(root, 'troupe.db')), config: defaultConfig() },
  });
}

describe('the OpenAPI document, generated from the route declarations', () => {
  it('describes every route the app serves, and only those', () => {
    const served = new Set(
      app()
        .app.routes.filter(
          (r) => (r.path.startsWith('/api/') && r.path !== '/api/*') || r.path === '/metrics',
        )
        .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`),
    );
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m} ${p}`)),
    );
    expect([...served].sort()).toEqual([...documented].sort());
  });

  it('is served at /api/openapi.json', async () => {
    const response = await app().app.request('/api/openapi.json', { headers: { Host: '127.0.0.1:8000' } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(JSON.parse(JSON.stringify(doc)));
    expect(doc.openapi).toBe('3.1.0');
  });

  it('filters tasks by any status, as a comma list', () => {
    const status = doc.paths['/api/tasks']!.get!.parameters!.find((p) => p.name === 'status')!;
    expect(status).toMatchObject({ in: 'query', style: 'form', explode: false });
    expect(status.schema).toEqual({ type: 'array', items: { $ref: '#/components/schemas/TaskStatus' } });
    expect(doc.components.schemas.TaskStatus).toEqual({ type: 'string', enum: [...TASK_STATUSES] });
  });

  it('declares the live streams: one frame schema, and every name a frame has', () => {
    for (const path of ['/api/events', '/api/tasks/{id}/events']) {
      const stream = doc.paths[path]!.get!.responses['200']!.content!['text/event-stream']!;
      expect(stream['x-frame'], path).toEqual({ $ref: '#/components/schemas/LiveFrame' });
      expect(stream['x-frame-names'], path).toEqual(LIVE_EVENT_NAMES);
    }
    const frames = (doc.components.schemas.LiveFrame as { oneOf: FrameSchema[] }).oneOf;
    const named = frames.flatMap(({ properties: { event } }) => event.enum ?? [event.const!]);
    expect(named.sort()).toEqual([...TASK_EVENT_TYPES, ...AQM_FRAME_NAMES].sort());
    expect(new Set(named)).toEqual(new Set(LIVE_EVENT_NAMES));
    expect(named).toContain('rate_limited');
    // a stored event's frame has an id; aqm's, of the same name or not, has none
    expect(frames.filter((frame) => frame.properties.id).map((frame) => frame.properties.event.enum)).toEqual(
      [[...TASK_EVENT_TYPES]],
    );
  });

  it('holds schemas that JSON Schema 2020-12 compiles, every $ref resolved', () => {
    const Ajv2020 = createRequire(import.meta.url)('ajv/dist/2020').default as new (
      options: object,
    ) => {
      addSchema(schema: unknown): void;
      compile(schema: unknown): unknown;
    };
    const ajv = new Ajv2020({ strict: false });
    const id = 'https://troupe.invalid/openapi.json';
    ajv.addSchema({ $id: id, ...doc });
    const pointers: string[] = [];
    const walk = (value: unknown, at: string) => {
      if (typeof value !== 'object' || value === null) return;
      for (const [key, child] of Object.entries(value)) {
        const pointer = `${at}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
        if (key === 'schema') pointers.push(pointer);
        else walk(child, pointer);
      }
    };
    walk(doc.paths, '/paths');
    for (const name of Object.keys(doc.components.schemas)) pointers.push(`/components/schemas/${name}`);
    expect(pointers.length).toBeGreaterThan(60);
    for (const pointer of pointers) {
      expect(() => ajv.compile({ $ref: `${id}#${encodeURI(pointer)}` }), pointer).not.toThrow();
    }
  });
});
