import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
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
});
