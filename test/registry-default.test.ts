import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { DEFAULT_REGISTRY } from '../src/registry/location.js';
import { project, troupe } from './support/troupe.js';

/**
 * The default registry and `troupe registry init`, through the built binary as an aqm user types
 * them: a team registry started in one command, published to, searched and pulled from in temp
 * folders; the default used when nothing names a registry; an unreachable default is one line,
 * and only when a registry operation was asked for.
 */

/** A HOME, cache and config of its own (no user config: the default registry applies). */
function userDirs(extra: Record<string, string> = {}): Record<string, string> {
  const home = mkdtempSync(join(tmpdir(), 'troupe-home-'));
  return { HOME: home, XDG_CACHE_HOME: join(home, 'cache'), XDG_CONFIG_HOME: join(home, 'config'), ...extra };
}

const PAIR = {
  '.troupe/pipelines/pair.yaml':
    'agents:\n  - id: writer\n    runtime: scripted\n    system_prompt: "{{ input }}"\n    handoffs: [{ to: editor }]\n  - id: editor\n    runtime: scripted\n    system_prompt: "{{ input }}"\n',
};

const NOWHERE = 'file:///nonexistent/troupe-registry.git';

describe('troupe registry init, and the default registry', () => {
  it('init → publish → search → pull, in temp folders', async () => {
    const env = userDirs();
    const registry = join(mkdtempSync(join(tmpdir(), 'troupe-team-')), 'pipelines-registry');
    const init = await troupe(tmpdir(), ['registry', 'init', registry], env);
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    expect(init.stdout).toMatch(/^started a pipeline registry in .+ \(commit [0-9a-f]{7}\)\n/);
    expect(JSON.parse(readFileSync(join(registry, 'index.json'), 'utf8'))).toEqual([]);
    expect(readFileSync(join(registry, 'README.md'), 'utf8')).toContain('troupe publish');
    const log = await execa('git', ['log', '--format=%s'], { cwd: registry });
    expect(log.stdout).toBe('Start a troupe registry');
    const clean = await execa('git', ['status', '--porcelain'], { cwd: registry });
    expect(clean.stdout).toBe('');

    const again = await troupe(tmpdir(), ['registry', 'init', registry], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^troupe: .+ is not empty/);

    const author = project(PAIR);
    const empty = await troupe(author, ['search', '--registry', registry], env);
    expect(empty.stdout).toMatch(/^nothing in /);
    const published = await troupe(
      author,
      ['publish', 'pair', '--registry', registry, '--description', 'two steps'],
      env,
    );
    expect(published.stderr).toBe('');
    expect(published.stdout).toMatch(/^published pair@1\.0\.0 to /);
    await troupe(author, ['publish', '--name', 'pair', '--registry', registry], env);

    // the default points at this registry: search and pull need no --registry nor config
    const user = project();
    const withDefault = { ...env, TROUPE_DEFAULT_REGISTRY: registry };
    const found = await troupe(user, ['search'], withDefault);
    expect(found.stdout).toBe('pair  1.0.0, 1.0.1  two steps');
    const pulled = await troupe(user, ['pull', 'pair@1.0.0'], withDefault);
    expect(pulled.stderr).toBe('');
    expect(pulled.stdout).toBe(`installed pair@1.0.0 from ${registry} into .troupe/pipelines/pair/`);
    expect(existsSync(join(user, '.troupe', 'pipelines', 'pair', 'agents.yaml'))).toBe(true);
  });

  it('the project config replaces the default; an unreachable default is one line, only when asked', async () => {
    const env = userDirs({ TROUPE_DEFAULT_REGISTRY: NOWHERE });
    const dir = project(PAIR);

    const search = await troupe(dir, ['search'], env);
    expect(search.code).toBe(1);
    expect(search.stdout).toBe('');
    expect(search.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(search.stderr).toMatch(
      new RegExp(`^troupe: cannot reach the default registry ${NOWHERE} \\(.+\\): pass --registry`),
    );
    const versions = await troupe(dir, ['pipeline', 'versions', 'pair'], env);
    expect(versions.code).toBe(1);
    expect(versions.stderr.split('\n').filter(Boolean)).toHaveLength(1);

    // the default is only read: publishing needs a registry of one's own
    const publish = await troupe(dir, ['publish', 'pair'], env);
    expect(publish.code).toBe(2);
    expect(publish.stderr).toMatch(
      new RegExp(
        `^troupe: no registry to publish to: the default, ${NOWHERE}, is only read here; start your own with \`troupe registry init DIR\``,
      ),
    );
    expect(publish.stderr.split('\n').filter(Boolean)).toHaveLength(1);

    // commands that are not registry operations say nothing about it
    for (const args of [
      ['validate', '--pipeline', 'pair'],
      ['pipeline', 'list'],
    ]) {
      const quiet = await troupe(dir, args, env);
      expect(quiet.code, args.join(' ')).toBe(0);
      expect(quiet.stderr, args.join(' ')).not.toMatch(/registry/);
    }

    const own = join(mkdtempSync(join(tmpdir(), 'troupe-team-')), 'r');
    expect((await troupe(dir, ['registry', 'init', own], env)).code).toBe(0);
    mkdirSync(join(dir, '.troupe'), { recursive: true });
    writeFileSync(join(dir, '.troupe', 'config.yaml'), `registry: ${own}\n`);
    const replaced = await troupe(dir, ['search'], env);
    expect(replaced.stderr).toBe('');
    expect(replaced.stdout).toBe(`nothing in ${own}`);
  });

  it("--offline (aqm's flag) reads the copy fetched last, without the registry", async () => {
    const env = userDirs();
    const parent = mkdtempSync(join(tmpdir(), 'troupe-team-'));
    const registry = join(parent, 'r');
    expect((await troupe(tmpdir(), ['registry', 'init', registry], env)).code).toBe(0);
    const dir = project({ ...PAIR, '.troupe/config.yaml': `registry: ${registry}\n` });
    const never = await troupe(dir, ['search', '--offline'], env);
    expect(never.code).toBe(1);
    expect(never.stderr).toBe(
      `troupe: no copy of registry ${registry} on this machine yet: run the command once without --offline`,
    );
    expect((await troupe(dir, ['publish', 'pair'], env)).code).toBe(0);
    expect((await troupe(dir, ['search'], env)).stdout).toBe('pair  1.0.0');

    // the registry is gone (offline): --offline still searches, lists versions and pulls
    renameSync(registry, `${registry}-away`);
    expect((await troupe(dir, ['search'], env)).code).toBe(1);
    expect((await troupe(dir, ['search', '--offline'], env)).stdout).toBe('pair  1.0.0');
    expect((await troupe(dir, ['pipeline', 'versions', 'pair', '--offline'], env)).stdout).toBe(
      '1.0.0  (latest)',
    );
    const user = project({ '.troupe/config.yaml': `registry: ${registry}\n` });
    const pulled = await troupe(user, ['pull', 'pair', '--offline'], env);
    expect(pulled.stderr).toBe('');
    expect(existsSync(join(user, '.troupe', 'pipelines', 'pair', 'agents.yaml'))).toBe(true);
  });

  it('ships a git URL as the default', async () => {
    expect(DEFAULT_REGISTRY).toMatch(/^https:\/\/.+\.git$/);
    const docs = readFileSync(join(import.meta.dirname, '..', 'docs', 'registry.md'), 'utf8');
    expect(docs).toContain(DEFAULT_REGISTRY);
  });
});
