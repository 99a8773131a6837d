import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { project, writerEditorPipeline } from '../../test/support/troupe.js';
import { loadProjectConfig } from '../pipeline/config.js';
import { initRegistry } from '../registry/init.js';
import { publishPipeline } from '../registry/publish.js';
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { createApp } from './app.js';

/**
 * The registry routes sit behind the server's checks as every route does: the token, the Host
 * (no DNS rebinding), and for the pull, which writes into the project, the same origin.
 */

const TOKEN = 'registry-test-token-0123456789';
let root: string;
let registry: string;

beforeEach(async () => {
  const home = mkdtempSync(path.join(tmpdir(), 'troupe-home-'));
  vi.stubEnv('XDG_CACHE_HOME', path.join(home, 'cache'));
  vi.stubEnv('XDG_CONFIG_HOME', path.join(home, 'config'));
  registry = path.join(home, 'registry');
  await initRegistry(registry);
  const author = project({ '.troupe/pipelines/write.yaml': writerEditorPipeline });
  const location = { kind: 'path' as const, path: registry };
  await publishPipeline({ root: author, config: loadProjectConfig(author), location, name: 'write' });
  root = project({ '.troupe/config.yaml': `registry: ${registry}\n` });
});
afterEach(() => void vi.unstubAllEnvs());

function app(token: string | null) {
  const store = openSqliteStore(path.join(root, '.troupe', 'troupe.db'));
  return createApp({ project: { root, store, config: loadProjectConfig(root) }, token }).app;
}

const pull = { method: 'POST', body: JSON.stringify({ version: '1.0.0' }) };
const installed = () => existsSync(path.join(root, '.troupe', 'pipelines', 'write', 'agents.yaml'));

describe('the registry routes behind the server checks', () => {
  it('need the token', async () => {
    const served = app(TOKEN);
    const headers = { Host: '127.0.0.1:8000', 'Content-Type': 'application/json' };
    expect((await served.request('/api/registry', { headers })).status).toBe(401);
    expect((await served.request('/api/registry/write/pull', { ...pull, headers })).status).toBe(401);
    expect(installed()).toBe(false);
    const authorized = { ...headers, Authorization: `Bearer ${TOKEN}` };
    const listed = await served.request('/api/registry', { headers: authorized });
    expect(listed.status).toBe(200);
    expect(await listed.json()).toMatchObject({
      registry,
      is_default: false,
      pipelines: [{ name: 'write' }],
    });
    expect((await served.request('/api/registry/write/pull', { ...pull, headers: authorized })).status).toBe(
      200,
    );
    expect(installed()).toBe(true);
  });

  it('answer only requests addressed to the loopback, and pull only from this origin', async () => {
    const served = app(null);
    const evil = { Host: 'evil.example', 'Content-Type': 'application/json' };
    expect((await served.request('/api/registry', { headers: evil })).status).toBe(403);
    const crossSite = {
      Host: '127.0.0.1:8000',
      Origin: 'http://evil.example',
      'Content-Type': 'application/json',
    };
    const refused = await served.request('/api/registry/write/pull', { ...pull, headers: crossSite });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: 'forbidden_origin' } });
    expect(installed()).toBe(false);
  });
});
