import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectTaskService } from '../app/project.js';
import { agent, handoff, pipeline } from '../engine/test-pipelines.js';
import { defaultConfig } from '../pipeline/config.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { createApp } from './app.js';
import { openApiDocument } from './openapi.js';

function app() {
  const root = mkdtempSync(path.join(tmpdir(), 'troupe-openapi-'));
  return createApp({
    project: { root, store: openSqliteStore(path.join(root, 'troupe.db')), config: defaultConfig() },
  });
}

describe('the OpenAPI document', () => {
  it('describes every route the app serves, and only those', () => {
    const served = new Set(
      app()
        .app.routes.filter((r) => r.path.startsWith('/api/') && r.path !== '/api/*')
        .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`),
    );
    const documented = new Set(
      Object.entries(openApiDocument.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m} ${p}`)),
    );
    expect([...served].sort()).toEqual([...documented].sort());
  });

  it('is served at /api/openapi.json', async () => {
    const response = await app().app.request('/api/openapi.json', { headers: { Host: '127.0.0.1:8000' } });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { openapi: string }).openapi).toBe('3.1.0');
  });

  it('declares every field a task detail has', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'troupe-openapi-'));
    const store = openSqliteStore(path.join(root, 'troupe.db'));
    const { app: served } = createApp({ project: { root, store, config: defaultConfig() } });
    const tasks = projectTaskService(root, store, defaultConfig());
    const id = tasks.start({
      pipeline: pipeline(agent('a', { handoffs: [handoff('b')] }), agent('b')),
      input: 'go',
      size: { size: 'M', by: 'cli' },
      script: { agents: { a: ['A'], b: ['B'] }, gates: {}, human: {} },
    });
    await tasks.continue(id);
    const response = await served.request(`/api/tasks/${id}`, { headers: { Host: '127.0.0.1:8000' } });
    const detail = (await response.json()) as Record<string, unknown> & { stages: Record<string, unknown>[] };
    const declared = (name: string) =>
      Object.keys(
        (openApiDocument.components.schemas as unknown as Record<string, { properties: object }>)[name]!
          .properties,
      );
    expect(Object.keys(detail).filter((k) => !declared('TaskDetail').includes(k))).toEqual([]);
    expect(Object.keys(detail.stages[0]!).filter((k) => !declared('Stage').includes(k))).toEqual([]);
    store.close();
  });
});
