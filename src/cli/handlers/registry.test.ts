import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StateError, UsageError } from '../../core/errors.js';
import {
  initRegistryFolder,
  pipelineVersions,
  publishToRegistry,
  pullFromRegistry,
  searchRegistry,
} from './registry.js';
import { capturedIo, SCRIPTED_PAIR, scratchProject, scratchRepo } from './testing.js';

// a home of its own: no cached clone or user config of another test or of the user is seen
beforeEach(() => {
  const home = mkdtempSync(join(tmpdir(), 'troupe-home-'));
  vi.stubEnv('HOME', home);
  vi.stubEnv('XDG_CACHE_HOME', join(home, 'cache'));
  vi.stubEnv('XDG_CONFIG_HOME', join(home, 'config'));
});
afterEach(() => void vi.unstubAllEnvs());

describe('troupe publish / search / pipeline versions / pull', () => {
  it('publishes to a registry checkout, finds it, lists its versions and installs it elsewhere', async () => {
    const registry = await scratchRepo();
    const author = scratchProject(SCRIPTED_PAIR);
    const published = capturedIo(author);
    expect(
      await publishToRegistry(
        'pair',
        { registry, description: 'writes then edits', tags: 'text, demo' },
        published,
      ),
    ).toBe(0);
    expect(published.stdout()).toMatch(/^published pair@1\.0\.0 to .+ \(commit [0-9a-f]{7}\)\n$/);
    await publishToRegistry('pair', { registry, bump: 'minor' }, capturedIo(author));

    const found = capturedIo(author);
    expect(await searchRegistry('demo', { registry }, found)).toBe(0);
    expect(found.stdout()).toBe('pair  1.0.0, 1.1.0  writes then edits  [text, demo]\n');
    const none = capturedIo(author);
    await searchRegistry('nothing-like-it', { registry }, none);
    expect(none.stdout()).toMatch(/^nothing matches "nothing-like-it" in /);

    const versions = capturedIo(author);
    expect(await pipelineVersions('pair', { registry }, versions)).toBe(0);
    expect(versions.stdout()).toBe('1.0.0\n1.1.0  (latest)\n');

    const user = scratchProject();
    const pulled = capturedIo(user);
    expect(await pullFromRegistry('pair@^1.0', { registry, json: true }, pulled)).toBe(0);
    expect(JSON.parse(pulled.stdout())).toMatchObject([
      { name: 'pair', version: '1.1.0', status: 'installed' },
    ]);
    expect(existsSync(join(user, '.troupe', 'pipelines', 'pair'))).toBe(true);
  });

  it('refuses --version with --bump, an unknown bump, and --registry without a name to pull', async () => {
    const io = capturedIo(scratchProject(SCRIPTED_PAIR));
    await expect(publishToRegistry('pair', { version: '1.0.0', bump: 'major' }, io)).rejects.toThrow(
      UsageError,
    );
    await expect(publishToRegistry('pair', { bump: 'huge' }, io)).rejects.toThrow(
      /expected patch, minor or major/,
    );
    await expect(pullFromRegistry(undefined, { registry: '/nowhere' }, io)).rejects.toThrow(
      /goes with a NAME/,
    );
  });
});

describe('troupe registry init', () => {
  it('starts a registry that publish, search and pull use at once; a folder that is not empty is refused', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'troupe-team-'));
    const started = capturedIo(parent);
    expect(await initRegistryFolder('registry', { json: true }, started)).toBe(0);
    const registry = join(parent, 'registry');
    expect(JSON.parse(started.stdout())).toMatchObject({
      dir: registry,
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    expect(readFileSync(join(registry, 'index.json'), 'utf8')).toBe('[]\n');

    const author = scratchProject(SCRIPTED_PAIR);
    expect(await publishToRegistry('pair', { registry }, capturedIo(author))).toBe(0);
    const found = capturedIo(author);
    await searchRegistry(undefined, { registry }, found);
    expect(found.stdout()).toBe('pair  1.0.0\n');
    const user = scratchProject();
    expect(await pullFromRegistry('pair', { registry }, capturedIo(user))).toBe(0);
    expect(existsSync(join(user, '.troupe', 'pipelines', 'pair', 'agents.yaml'))).toBe(true);

    const busy = mkdtempSync(join(tmpdir(), 'troupe-busy-'));
    writeFileSync(join(busy, 'notes.txt'), 'mine\n');
    await expect(initRegistryFolder(undefined, {}, capturedIo(busy))).rejects.toThrow(StateError);
    expect(existsSync(join(busy, '.git'))).toBe(false);
  });
});
