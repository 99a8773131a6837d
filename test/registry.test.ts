import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';

import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { read, rev, sh, tmpRepo, writeFiles } from './support/git-repo.js';
import { type CliResult, project, troupe, bin as troupeBin } from './support/troupe.js';

/**
 * The pipeline registry through the built binary: registries are real git repositories (bare,
 * made here), the cache and user config live in a temp HOME, and `gh` is a fake that records
 * its argv.
 */

/** A HOME, cache and config of its own, so no test sees another's cached clones. */
function userDirs(): Record<string, string> {
  const home = mkdtempSync(join(tmpdir(), 'troupe-home-'));
  return { HOME: home, XDG_CACHE_HOME: join(home, 'cache'), XDG_CONFIG_HOME: join(home, 'config') };
}

function run(cwd: string, args: string[], env: Record<string, string>): Promise<CliResult> {
  return troupe(cwd, args, env);
}

async function json<T>(cwd: string, args: string[], env: Record<string, string>): Promise<T> {
  const result = await run(cwd, [...args, '--json'], env);
  if (result.code !== 0) throw new Error(`exit ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** A bare repository (branch main) holding `files` in one commit. */
async function bareRegistry(files: Record<string, string>): Promise<string> {
  const seed = await tmpRepo({ 'README.md': '# a pipeline registry\n', ...files });
  const bare = `${seed}.git`;
  await sh(seed, 'clone', '--quiet', '--bare', seed, bare);
  return bare;
}

/** Commits `files` to the registry's main branch, as another publisher (or an attacker) would. */
async function pushToRegistry(bare: string, files: Record<string, string>): Promise<void> {
  const clone = join(mkdtempSync(join(tmpdir(), 'troupe-clone-')), 'c');
  await sh(tmpdir(), 'clone', '--quiet', bare, clone);
  writeFiles(clone, files);
  await sh(clone, 'add', '--all');
  await sh(clone, '-c', 'user.name=x', '-c', 'user.email=x@x', 'commit', '--quiet', '-m', 'change');
  await sh(clone, 'push', '--quiet', 'origin', 'HEAD:main');
}

/** A file of a registry's main branch. */
async function registryFile(bare: string, path: string): Promise<string> {
  return sh(bare, 'show', `main:${path}`);
}

function pipelineYaml(tag: string): string {
  return `agents:
  - id: reviewer
    runtime: claude
    system_prompt: "Review (${tag}): {{ input }}"
`;
}

/** `pipelines/<name>/<version>/` in troupe's layout, for each version. */
function versions(name: string, list: string[]): Record<string, string> {
  return Object.fromEntries(
    list.flatMap((v) => [
      [`pipelines/${name}/${v}/agents.yaml`, pipelineYaml(`${name} ${v}`)],
      [`pipelines/${name}/${v}/README.md`, `# ${name}\n`],
      [`pipelines/${name}/${v}/meta.json`, JSON.stringify({ name, version: v })],
    ]),
  );
}

const REVIEW_VERSIONS = ['1.2.0', '1.2.5', '1.3.0', '1.9.0', '1.10.0', '2.0.0'];

function lockOf(dir: string): {
  lockfile: number;
  pipelines: Record<
    string,
    { version: string; registry: string; hash: string; files: Record<string, string> }
  >;
} {
  return parse(readFileSync(join(dir, '.troupe', 'pipelines.lock'), 'utf8'));
}

/** What a project's `.troupe/` holds, recursively (nothing half-written is left in it). */
function troupeFiles(dir: string): string[] {
  const base = join(dir, '.troupe');
  if (!existsSync(base)) return [];
  return (readdirSync(base, { recursive: true }) as string[]).sort();
}

describe('troupe search and pipeline versions', () => {
  it('finds pipelines by name, description and tag, from index.json', async () => {
    const env = userDirs();
    const registry = await bareRegistry({
      ...versions('review', ['1.0.0']),
      ...versions('deploy', ['0.3.0']),
      'index.json': JSON.stringify([
        { name: 'deploy', description: 'Ship to production', tags: ['ops'] },
        { name: 'review', description: 'Code review with a security gate', tags: ['quality'] },
      ]),
    });
    const dir = project();
    const all = await json<{ registry: string; pipelines: Array<{ name: string }> }>(
      dir,
      ['search', '--registry', registry],
      env,
    );
    expect(all.registry).toBe(registry);
    expect(all.pipelines.map((p) => p.name)).toEqual(['deploy', 'review']);
    expect(await json(dir, ['search', 'SECURITY', '--registry', registry], env)).toEqual({
      registry,
      pipelines: [
        {
          name: 'review',
          description: 'Code review with a security gate',
          tags: ['quality'],
          versions: ['1.0.0'],
          latest: '1.0.0',
        },
      ],
    });
    const byTag = await run(dir, ['search', 'ops', '--registry', registry], env);
    expect(byTag.stdout).toBe('deploy  0.3.0  Ship to production  [ops]');
    const none = await run(dir, ['search', 'nothing-like-this', '--registry', registry], env);
    expect([none.code, none.stdout]).toEqual([0, `nothing matches "nothing-like-this" in ${registry}`]);
  });

  it('shows each pipeline with its versions in text, as aqm does; --json lists them all', async () => {
    const env = userDirs();
    const registry = await bareRegistry({
      ...versions('review', REVIEW_VERSIONS),
      ...versions('deploy', ['0.3.0', '0.4.0']),
      'index.json': JSON.stringify([
        { name: 'deploy', description: 'Ship to production', tags: ['ops'] },
        { name: 'review', description: 'Code review' },
      ]),
    });
    const dir = project({ '.troupe/config.yaml': `registry: ${registry}\n` });
    const text = await run(dir, ['search'], env);
    expect([text.code, ...text.stdout.split('\n')]).toEqual([
      0,
      'deploy  0.3.0, 0.4.0                                   Ship to production  [ops]',
      'review  1.2.5, 1.3.0, 1.9.0, 1.10.0, 2.0.0 (+1 older)  Code review',
    ]);
    const found = await json<{ pipelines: Array<{ versions: string[]; latest: string }> }>(
      dir,
      ['search', 'review'],
      env,
    );
    expect(found.pipelines).toMatchObject([{ versions: REVIEW_VERSIONS, latest: '2.0.0' }]);
  });

  it('lists versions by semver, not as strings: 1.9.0 before 1.10.0', async () => {
    const env = userDirs();
    const registry = await bareRegistry(versions('review', REVIEW_VERSIONS));
    const dir = project();
    expect(await json(dir, ['pipeline', 'versions', 'review', '--registry', registry], env)).toEqual({
      name: 'review',
      registry,
      versions: ['1.2.0', '1.2.5', '1.3.0', '1.9.0', '1.10.0', '2.0.0'],
      latest: '2.0.0',
    });
    const text = await run(dir, ['pipeline', 'versions', 'review', '--registry', registry], env);
    expect(text.stdout.split('\n').slice(-2)).toEqual(['1.10.0', '2.0.0  (latest)']);
    const missing = await run(dir, ['pipeline', 'versions', 'nope', '--registry', registry], env);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('the registry has no pipeline named "nope"');
  });

  it('uses the registry of .troupe/config.yaml, else of the user config, and says when there is none (no default)', async () => {
    const env = userDirs();
    const registry = await bareRegistry(versions('review', ['1.0.0']));
    const configured = project({ '.troupe/config.yaml': `registry: ${registry}\n` });
    const fromProject = await json<{ registry: string }>(configured, ['search'], env);
    expect(fromProject.registry).toBe(registry);
    const dir = project();
    // no default either (TROUPE_DEFAULT_REGISTRY empty): registry-default.test.ts tests the default
    const unset = await run(dir, ['search'], { ...env, TROUPE_DEFAULT_REGISTRY: '' });
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain('troupe: no registry configured');
    mkdirSync(join(env.XDG_CONFIG_HOME!, 'troupe'), { recursive: true });
    writeFileSync(join(env.XDG_CONFIG_HOME!, 'troupe', 'config.yaml'), `registry: ${registry}\n`);
    expect((await json<{ registry: string }>(dir, ['search'], env)).registry).toBe(registry);
    const unreachable = await run(dir, ['search', '--registry', 'file:///nonexistent/registry.git'], env);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('cannot fetch registry file:///nonexistent/registry.git');
    expect(unreachable.stderr).not.toContain('    at ');
  });
});

describe('troupe pull', () => {
  it('resolves exact versions, ^ and ~ ranges to the highest version satisfying them', async () => {
    const env = userDirs();
    const registry = await bareRegistry(versions('review', REVIEW_VERSIONS));
    const dir = project();
    const installed = (range: string) =>
      json<Array<{ version: string }>>(dir, ['pull', `review${range}`, '--registry', registry], env);
    const prompt = () => read(dir, '.troupe/pipelines/review/agents.yaml');
    expect((await installed('@1.2.0'))[0]!.version).toBe('1.2.0');
    expect(prompt()).toContain('Review (review 1.2.0)');
    expect((await installed('@~1.2.0'))[0]!.version).toBe('1.2.5');
    expect((await installed('@^1.2'))[0]!.version).toBe('1.10.0'); // 1.9.0 would be the string-sorted answer
    expect(prompt()).toContain('Review (review 1.10.0)');
    expect((await installed('@~1.3.0'))[0]!.version).toBe('1.3.0');
    expect((await installed(''))[0]!.version).toBe('2.0.0');
    const lock = lockOf(dir);
    expect(Object.keys(lock.pipelines)).toEqual(['review']);
    expect(lock.pipelines.review).toMatchObject({ version: '2.0.0', registry });
    expect(Object.keys(lock.pipelines.review!.files)).toEqual(['README.md', 'agents.yaml', 'meta.json']);
    // the installed pipeline is one of the project's, found by name
    const validate = await run(dir, ['validate', '--pipeline', 'review'], env);
    expect(validate.code).toBe(0);
    const none = await run(dir, ['pull', 'review@^3', '--registry', registry], env);
    expect(none.code).toBe(3);
    expect(none.stderr).toContain('no version of review satisfies ^3');
    expect(none.stderr).toContain('available: 1.2.0, 1.2.5, 1.3.0, 1.9.0, 1.10.0, 2.0.0');
  });

  it('refuses an invalid pipeline, or one whose imports are invalid or outside it, and writes nothing', async () => {
    const env = userDirs();
    const registry = await bareRegistry({
      'pipelines/broken/1.0.0/agents.yaml': `agents:
  - id: a
    runtime: claude
    system_prompt: "{{ input }}"
    handoffs: [{ to: nobody }]
`,
      'pipelines/bad-import/1.0.0/agents.yaml': `imports:
  - from: ./shared.yaml
agents:
  - id: a
    runtime: claude
    system_prompt: "{{ input }}"
`,
      'pipelines/bad-import/1.0.0/shared.yaml': '- id: helper\n  runtime: nosuch\n',
      'pipelines/escapes/1.0.0/agents.yaml': `imports:
  - from: ../../broken/1.0.0/agents.yaml
agents:
  - id: a
    runtime: claude
    system_prompt: "{{ input }}"
`,
    });
    const dir = project();
    const broken = await run(dir, ['pull', 'broken', '--registry', registry], env);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(
      /^troupe: pipelines\/broken\/1\.0\.0\/agents\.yaml:5:22: handoff target `nobody` does not exist$/m,
    );
    expect(broken.stderr).toContain('nothing was installed');
    const imported = await run(dir, ['pull', 'bad-import', '--registry', registry], env);
    expect(imported.code).toBe(2);
    expect(imported.stderr).toMatch(/^troupe: pipelines\/bad-import\/1\.0\.0\/shared\.yaml:2:12: /);
    const escapes = await run(dir, ['pull', 'escapes', '--registry', registry], env);
    expect(escapes.code).toBe(2);
    expect(escapes.stderr).toContain('outside the project');
    // no pipeline, no lock, no staging folder left behind
    expect(troupeFiles(dir)).toEqual(['pipelines']);
  });

  it('installs exactly what the lock says, and refuses a tampered file or one changed upstream', async () => {
    const env = userDirs();
    const registry = await bareRegistry(versions('review', REVIEW_VERSIONS));
    const dir = project();
    expect((await run(dir, ['pull', 'review@1.2.5', '--registry', registry], env)).code).toBe(0);
    const lockText = read(dir, '.troupe/pipelines.lock');

    // a checkout of the project with the lock only: pull installs 1.2.5, not the latest
    const fresh = project({ '.troupe/pipelines.lock': lockText });
    const installed = await json<Array<{ name: string; version: string; status: string }>>(
      fresh,
      ['pull'],
      env,
    );
    expect(installed).toMatchObject([{ name: 'review', version: '1.2.5', status: 'installed' }]);
    expect(read(fresh, '.troupe/pipelines/review/agents.yaml')).toBe(
      read(dir, '.troupe/pipelines/review/agents.yaml'),
    );
    expect(read(fresh, '.troupe/pipelines.lock')).toBe(lockText);
    expect(await json(fresh, ['pull'], env)).toMatchObject([{ status: 'unchanged' }]);

    // tampered with after the install: refused, the file left as it is; --force restores it
    const file = join(fresh, '.troupe', 'pipelines', 'review', 'agents.yaml');
    writeFileSync(file, pipelineYaml('evil'));
    const tampered = await run(fresh, ['pull'], env);
    expect(tampered.code).toBe(7);
    expect(tampered.stderr).toContain(
      'troupe: .troupe/pipelines/review/agents.yaml does not match pipelines.lock (review@1.2.5); nothing was written',
    );
    expect(readFileSync(file, 'utf8')).toContain('evil');
    expect((await run(fresh, ['pull', '--force'], env)).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toContain('Review (review 1.2.5)');

    // the registry's 1.2.5 rewritten under the same version: refused, nothing installed
    await pushToRegistry(registry, { 'pipelines/review/1.2.5/agents.yaml': pipelineYaml('rewritten') });
    const again = project({ '.troupe/pipelines.lock': lockText });
    const upstream = await run(again, ['pull'], env);
    expect(upstream.code).toBe(7);
    expect(upstream.stderr).toContain(
      `troupe: pipelines/review/1.2.5/agents.yaml in ${registry} changed after review@1.2.5 was locked; nothing was written`,
    );
    expect(troupeFiles(again)).toEqual(['pipelines.lock']);
    const named = await run(dir, ['pull', 'review@1.2.5', '--registry', registry], env);
    expect(named.code).toBe(7);
    expect(read(dir, '.troupe/pipelines/review/agents.yaml')).toContain('Review (review 1.2.5)');
    expect(read(dir, '.troupe/pipelines.lock')).toBe(lockText);
  });

  it('refuses to overwrite a pipeline changed locally unless --force', async () => {
    const env = userDirs();
    const registry = await bareRegistry(versions('review', REVIEW_VERSIONS));
    const dir = project();
    await run(dir, ['pull', 'review@1.2.0', '--registry', registry], env);
    writeFileSync(join(dir, '.troupe', 'pipelines', 'review', 'notes.md'), 'mine\n');
    const refused = await run(dir, ['pull', 'review@1.3.0', '--registry', registry], env);
    expect(refused.code).toBe(7);
    expect(refused.stderr).toContain(
      'troupe: .troupe/pipelines/review/ has local changes (notes.md); nothing was written',
    );
    expect(refused.stderr).toContain('hint: troupe pull review@1.3.0 --force overwrites it');
    expect(lockOf(dir).pipelines.review!.version).toBe('1.2.0');
    const forced = await json<Array<{ version: string }>>(
      dir,
      ['pull', 'review@1.3.0', '--force', '--registry', registry],
      env,
    );
    expect(forced[0]!.version).toBe('1.3.0');
    expect(existsSync(join(dir, '.troupe', 'pipelines', 'review', 'notes.md'))).toBe(false);
    expect(troupeFiles(dir).filter((f) => f.includes('.staging') || f.includes('.old'))).toEqual([]);
  });
});

describe('troupe pull on a terminal', () => {
  const hasScript = existsSync('/usr/bin/script');

  it.skipIf(!hasScript)('asks before overwriting local changes: no keeps them, yes pulls', async () => {
    const env = userDirs();
    const registry = await bareRegistry(versions('review', REVIEW_VERSIONS));
    const dir = project();
    await run(dir, ['pull', 'review@1.2.0', '--registry', registry], env);
    writeFileSync(join(dir, '.troupe', 'pipelines', 'review', 'README.md'), 'mine\n');
    // util-linux `script` gives the command a terminal and types the answer into it
    const onTerminal = (answer: string) =>
      execa('script', ['-qec', `node ${troupeBin} pull review@1.3.0 --registry ${registry}`, '/dev/null'], {
        cwd: dir,
        env: { ...env, NO_COLOR: '1' },
        input: answer,
        reject: false,
      });
    const no = await onTerminal('n\n');
    expect(String(no.stdout)).toContain(
      '.troupe/pipelines/review/ has local changes (README.md); overwrite it with review@1.3.0? [y/N]',
    );
    expect(no.exitCode).toBe(7);
    expect(read(dir, '.troupe/pipelines/review/README.md')).toBe('mine\n');
    const yes = await onTerminal('y\n');
    expect(yes.exitCode).toBe(0);
    expect(lockOf(dir).pipelines.review!.version).toBe('1.3.0');
    expect(read(dir, '.troupe/pipelines/review/README.md')).toBe('# review\n');
  });
});

describe('troupe publish', () => {
  const team = {
    '.troupe/pipelines/team.yaml': `imports:
  - from: ./shared.yaml
agents:
  - id: writer
    runtime: claude
    system_prompt: "Write: {{ input }}"
`,
    '.troupe/pipelines/shared.yaml': `- id: reviewer
  runtime: claude
  system_prompt: "Review: {{ input }}"
  handoffs: [{ to: writer }]
`,
  };

  it('commits a new version with index.json to a local registry; an existing version is refused; --bump goes from the latest', async () => {
    const env = userDirs();
    const registry = await bareRegistry({});
    const dir = project(team);
    const first = await json<{ version: string; hash: string; commit: string }>(
      dir,
      [
        'publish',
        'team',
        '--registry',
        registry,
        '--description',
        'Writer and reviewer',
        '--tags',
        'writing, review',
      ],
      env,
    );
    expect(first.version).toBe('1.0.0');
    expect(await rev(registry, 'main')).toBe(first.commit);
    expect(await sh(registry, 'log', '-1', '--format=%s', 'main')).toBe('Publish team 1.0.0');
    expect((await sh(registry, 'ls-tree', '-r', '--name-only', 'main')).split('\n')).toEqual([
      'README.md',
      'index.json',
      'pipelines/team/1.0.0/README.md',
      'pipelines/team/1.0.0/agents.yaml',
      'pipelines/team/1.0.0/meta.json',
      'pipelines/team/1.0.0/shared.yaml',
    ]);
    expect(await registryFile(registry, 'pipelines/team/1.0.0/agents.yaml')).toBe(
      team['.troupe/pipelines/team.yaml'].trimEnd(),
    );
    const index = JSON.parse(await registryFile(registry, 'index.json'));
    expect(index).toEqual([
      {
        name: 'team',
        description: 'Writer and reviewer',
        tags: ['writing', 'review'],
        version: '1.0.0',
        latest: '1.0.0',
        versions: ['1.0.0'],
        agents_count: 2,
        hashes: { '1.0.0': first.hash },
      },
    ]);

    const again = await run(dir, ['publish', 'team', '--registry', registry, '--version', '1.0.0'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`troupe: team@1.0.0 is already in registry ${registry}`);
    expect(await rev(registry, 'main')).toBe(first.commit);

    for (const version of ['1.9.0', '1.10.0']) {
      expect(
        (await run(dir, ['publish', 'team', '--registry', registry, '--version', version], env)).code,
      ).toBe(0);
    }
    const patch = await json<{ version: string }>(dir, ['publish', 'team', '--registry', registry], env);
    expect(patch.version).toBe('1.10.1');
    const minor = await json<{ version: string }>(
      dir,
      ['publish', 'team', '--registry', registry, '--bump', 'minor'],
      env,
    );
    expect(minor.version).toBe('1.11.0');
    const latest = JSON.parse(await registryFile(registry, 'index.json'))[0];
    expect(latest.versions).toEqual(['1.0.0', '1.9.0', '1.10.0', '1.10.1', '1.11.0']);
    expect(latest.description).toBe('Writer and reviewer');

    // what was published pulls back with the hash index.json recorded
    const other = project();
    const pulled = await json<Array<{ version: string; hash: string }>>(
      other,
      ['pull', 'team@1.0.0', '--registry', registry],
      env,
    );
    expect(pulled[0]!.hash).toBe(first.hash);
    expect(read(other, '.troupe/pipelines/team/shared.yaml')).toBe(team['.troupe/pipelines/shared.yaml']);

    // a published version's files changed behind index.json's back: refused even without a lock
    await pushToRegistry(registry, {
      'pipelines/team/1.0.0/shared.yaml': '- id: reviewer\n  runtime: codex\n',
    });
    const unlocked = project();
    const changed = await run(unlocked, ['pull', 'team@1.0.0', '--registry', registry], env);
    expect(changed.code).toBe(7);
    expect(changed.stderr).toContain(
      `troupe: pipelines/team/1.0.0 in ${registry} does not match the hash index.json records for team@1.0.0`,
    );
    expect(troupeFiles(unlocked)).toEqual([]);
  });

  it('publishes the default pipeline without a name, to a registry that is a checkout', async () => {
    const env = userDirs();
    const registry = await tmpRepo({ 'README.md': 'registry\n' });
    writeFileSync(join(registry, 'scratch.txt'), 'uncommitted work of the owner\n');
    // a required param is given at run time: it does not stop a publish
    // biome-ignore lint/suspicious/noTemplateCurlyInString: troupe's own param placeholder
    const withParam = `params:\n  lang: { type: string, required: true }\n${pipelineYaml('in ${{ params.lang }}')}`;
    const dir = project({ '.troupe/pipelines/default.yaml': withParam });
    const published = await json<{ name: string; version: string; commit: string }>(
      dir,
      ['publish', '--registry', registry],
      env,
    );
    expect(published).toMatchObject({ name: 'default', version: '1.0.0' });
    expect(await rev(registry, 'HEAD')).toBe(published.commit);
    expect(await sh(registry, 'status', '--porcelain')).toBe('?? scratch.txt');
    // a folder inside a repository is not a registry: publish would commit to the repository around it
    mkdirSync(join(registry, 'sub'));
    const inside = await run(dir, ['publish', '--registry', join(registry, 'sub')], env);
    expect(inside.code).toBe(1);
    expect(inside.stderr).toContain('is not a git repository (or not the top of one)');
    expect(await rev(registry, 'HEAD')).toBe(published.commit);
  });

  it("aqm's `publish --name X`: the pipeline named X, else the default one, as X, the version auto-incremented", async () => {
    const env = userDirs();
    const registry = await bareRegistry({});
    const dir = project({
      '.troupe/config.yaml': `registry: ${registry}\n`,
      '.troupe/pipelines/default.yaml': pipelineYaml('mine'),
      '.troupe/pipelines/review.yaml': pipelineYaml('review'),
    });
    const published: string[] = [];
    for (const args of [[], [], ['--version', '2.0.0'], []]) {
      const result = await run(dir, ['publish', '--name', 'my-pipeline', ...args], env);
      expect([result.code, result.stderr]).toEqual([0, '']);
      published.push(result.stdout.replace(/commit [0-9a-f]{7}/, 'commit …'));
    }
    expect(published).toEqual(
      ['1.0.0', '1.0.1', '2.0.0', '2.0.1'].map(
        (v) => `published my-pipeline@${v} (pipeline default) to ${registry} (commit …)`,
      ),
    );
    expect(await registryFile(registry, 'pipelines/my-pipeline/1.0.0/agents.yaml')).toBe(
      pipelineYaml('mine').trimEnd(),
    );
    expect(JSON.parse(await registryFile(registry, 'pipelines/my-pipeline/2.0.1/meta.json'))).toMatchObject({
      name: 'my-pipeline',
      version: '2.0.1',
    });

    // a pipeline of that name is the one published; a NAME picks another to publish under --name
    expect(await json(dir, ['publish', '--name', 'review'], env)).toMatchObject({
      name: 'review',
      pipeline: 'review',
      version: '1.0.0',
    });
    expect(await json(dir, ['publish', 'review', '--name', 'team-review'], env)).toMatchObject({
      name: 'team-review',
      pipeline: 'review',
      version: '1.0.0',
    });
    const bad = await run(dir, ['publish', '--name', '../x'], env);
    expect(bad.code).toBe(2);

    // what was published under the new name pulls back under it
    const other = project({ '.troupe/config.yaml': `registry: ${registry}\n` });
    const pulled = await json<Array<{ name: string; version: string }>>(other, ['pull', 'my-pipeline'], env);
    expect(pulled).toMatchObject([{ name: 'my-pipeline', version: '2.0.1' }]);
    expect(read(other, '.troupe/pipelines/my-pipeline/agents.yaml')).toBe(pipelineYaml('mine'));
  });

  it('refuses an invalid pipeline and commits nothing', async () => {
    const env = userDirs();
    const registry = await bareRegistry({});
    const before = await rev(registry, 'main');
    const dir = project({ '.troupe/pipelines/bad.yaml': 'agents:\n  - id: a\n    runtime: nosuch\n' });
    const result = await run(dir, ['publish', 'bad', '--registry', registry], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bad\.yaml:3:14: /);
    expect(await rev(registry, 'main')).toBe(before);
  });

  it('to a remote registry: pushes a branch and opens a pull request with gh', async () => {
    const env = userDirs();
    const registry = await bareRegistry({});
    const before = await rev(registry, 'main');
    const bin = mkdtempSync(join(tmpdir(), 'troupe-bin-'));
    const log = join(bin, 'gh-argv');
    writeFileSync(
      join(bin, 'gh'),
      `#!/bin/sh\nprintf '%s\\n' "$@" > '${log}'\necho https://github.com/o/registry/pull/12\n`,
    );
    chmodSync(join(bin, 'gh'), 0o755);
    const dir = project(team);
    const url = `file://${registry}`;
    const result = await json<{ version: string; branch: string; url: string; commit: string }>(
      dir,
      ['publish', 'team', '--registry', url, '--bump', 'major'],
      { ...env, PATH: `${bin}:${process.env.PATH}` },
    );
    expect(result).toMatchObject({
      version: '1.0.0',
      branch: 'publish/team-1.0.0',
      url: 'https://github.com/o/registry/pull/12',
    });
    expect(await rev(registry, 'main')).toBe(before);
    expect(await rev(registry, 'publish/team-1.0.0')).toBe(result.commit);
    expect(await sh(registry, 'show', 'publish/team-1.0.0:index.json')).toContain(
      '"versions": [\n      "1.0.0"\n    ]',
    );
    expect(readFileSync(log, 'utf8').split('\n').slice(0, 8)).toEqual([
      'pr',
      'create',
      '--head',
      'publish/team-1.0.0',
      '--base',
      'main',
      '--title',
      'Publish team 1.0.0',
    ]);
  });
});

describe('troupe publish without gh', () => {
  it('to a remote registry: pushes nothing and prints the commands to run', async () => {
    const env = userDirs();
    const registry = await bareRegistry({});
    // a PATH with node and git only
    const bin = mkdtempSync(join(tmpdir(), 'troupe-bin-'));
    for (const tool of ['node', 'git']) {
      const found = (process.env.PATH ?? '')
        .split(':')
        .map((d) => join(d, tool))
        .find((f) => existsSync(f));
      if (found) symlinkSync(found, join(bin, tool));
    }
    const dir = project({ '.troupe/pipelines/solo.yaml': pipelineYaml('solo') });
    const result = await run(dir, ['publish', '--registry', `file://${registry}`], { ...env, PATH: bin });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('troupe: gh (the GitHub CLI) is not on PATH');
    expect(result.stderr).toContain('git push origin publish/solo-1.0.0');
    expect(result.stderr).toContain(
      "gh pr create --head publish/solo-1.0.0 --base main --title 'Publish solo 1.0.0'",
    );
    expect(await sh(registry, 'branch', '--list')).toBe('* main');
  });
});

describe('aqm registries', () => {
  it('reads aqm’s layout: index.json, versions.json, v<version> folders and the legacy flat one', async () => {
    const env = userDirs();
    const aqmPipeline = (v: string) => `apiVersion: aqm/v0.1
agents:
  - id: scanner
    runtime: claude
    system_prompt: "Scan ${v}: {{ input }}"
    gate: { type: llm, prompt: "Any critical issue left?", max_retries: 2 }
    handoffs:
      - { to: fixer, condition: on_reject }
  - id: fixer
    runtime: gemini
    system_prompt: "Fix: {{ input }}"
`;
    const meta = (v: string) =>
      JSON.stringify({
        name: 'security-audit',
        description: 'Security audit',
        version: v,
        tags: ['security'],
        agents_count: 2,
        author: 'aqm',
      });
    const registry = await bareRegistry({
      'index.json': JSON.stringify([
        {
          name: 'security-audit',
          description: 'Security audit with a fixer',
          author: 'aqm',
          version: '1.10.0',
          versions: ['1.0.0', '1.10.0', '1.9.0'],
          latest: '1.10.0',
          tags: ['security'],
          agents_count: 2,
        },
      ]),
      'pipelines/security-audit/versions.json': JSON.stringify({
        versions: ['1.0.0', '1.10.0', '1.9.0'],
        latest: '1.10.0',
      }),
      ...Object.fromEntries(
        ['1.0.0', '1.9.0', '1.10.0'].flatMap((v) => [
          [`pipelines/security-audit/v${v}/agents.yaml`, aqmPipeline(v)],
          [`pipelines/security-audit/v${v}/meta.json`, meta(v)],
        ]),
      ),
      'pipelines/legacy/agents.yaml': aqmPipeline('legacy'),
      'pipelines/legacy/meta.json': JSON.stringify({ name: 'legacy', description: 'Before versions' }),
    });
    const dir = project();
    const found = await json<{ pipelines: unknown[] }>(dir, ['search', '--registry', registry], env);
    expect(found.pipelines).toEqual([
      { name: 'legacy', description: 'Before versions', tags: [], versions: ['0.1.0'], latest: '0.1.0' },
      {
        name: 'security-audit',
        description: 'Security audit with a fixer',
        tags: ['security'],
        versions: ['1.0.0', '1.9.0', '1.10.0'],
        latest: '1.10.0',
      },
    ]);
    const pulled = await json<Array<{ version: string }>>(
      dir,
      ['pull', 'security-audit@^1.0', '--registry', registry],
      env,
    );
    expect(pulled[0]!.version).toBe('1.10.0');
    expect(readdirSync(join(dir, '.troupe', 'pipelines', 'security-audit')).sort()).toEqual([
      'agents.yaml',
      'meta.json',
    ]);
    expect(read(dir, '.troupe/pipelines/security-audit/agents.yaml')).toContain('Scan 1.10.0');
    const legacy = await json<Array<{ version: string }>>(
      dir,
      ['pull', 'legacy', '--registry', registry],
      env,
    );
    expect(legacy[0]!.version).toBe('0.1.0');
    expect(readdirSync(join(dir, '.troupe', 'pipelines', 'legacy')).sort()).toEqual([
      'agents.yaml',
      'meta.json',
    ]);
    expect(Object.keys(lockOf(dir).pipelines)).toEqual(['legacy', 'security-audit']);
  });
});

describe("aqm's --repo owner/name", () => {
  it('search, pipeline versions and pull take a GitHub repository by name; a bad name or both flags is exit 2', async () => {
    const env = userDirs();
    const bare = await bareRegistry({ ...versions('review', ['1.0.0', '1.2.0']) });
    // a stand-in GitHub: TROUPE_GITHUB_URL/<owner>/<name>.git
    const github = mkdtempSync(join(tmpdir(), 'troupe-github-'));
    mkdirSync(join(github, 'acme'));
    await sh(tmpdir(), 'clone', '--quiet', '--bare', bare, join(github, 'acme', 'pipelines.git'));
    const withGithub = { ...env, TROUPE_GITHUB_URL: `file://${github}/` };
    const url = `file://${github}/acme/pipelines.git`;
    const dir = project();

    const found = await json<{ registry: string; pipelines: Array<{ name: string; latest: string }> }>(
      dir,
      ['search', '--repo', 'acme/pipelines'],
      withGithub,
    );
    expect(found.registry).toBe(url);
    expect(found.pipelines.map((p) => `${p.name}@${p.latest}`)).toEqual(['review@1.2.0']);
    expect(
      await json(dir, ['pipeline', 'versions', 'review', '--repo', 'acme/pipelines'], withGithub),
    ).toMatchObject({ registry: url, versions: ['1.0.0', '1.2.0'] });
    const pulled = await run(dir, ['pull', 'review@1.0.0', '--repo', 'acme/pipelines'], withGithub);
    expect(pulled.code, pulled.stderr).toBe(0);
    expect(lockOf(dir).pipelines.review).toMatchObject({ version: '1.0.0', registry: url });

    for (const bad of ['../etc', 'acme/../x', 'acme', 'acme/pipes;rm -rf', '-x/y', 'acme/x.git']) {
      const r = await run(dir, ['search', '--repo', bad], withGithub);
      expect(r.code, bad).toBe(2);
      expect(r.stderr.trim().split('\n')[0]).toBe(
        `troupe: --repo must be owner/name (a GitHub repository), not '${bad}'`,
      );
    }
    const both = await run(dir, ['search', '--repo', 'acme/pipelines', '--registry', bare], withGithub);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/^troupe: --repo and --registry name the same thing/);
  });
});
