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
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { rev, sh, tmpRepo, writeFiles } from './support/git-repo.js';
import { type CliResult, project, troupe } from './support/troupe.js';

/**
 * A registry is someone else's repository (red team 2.3, M5 and L1–L5): the registries here are
 * real git repositories holding what an attacker would commit — symbolic links, huge files,
 * escape sequences, hooks — and every command runs through the built binary.
 */

function userDirs(): Record<string, string> {
  const home = mkdtempSync(join(tmpdir(), 'troupe-home-'));
  return { HOME: home, XDG_CACHE_HOME: join(home, 'cache'), XDG_CONFIG_HOME: join(home, 'config') };
}

const PIPELINE = `agents:
  - id: reviewer
    runtime: claude
    system_prompt: "Review: {{ input }}"
`;

/** Makes `build` happen in a registry checkout (files, links), then commits it all. */
async function commitAll(repo: string, build: () => void): Promise<void> {
  build();
  await sh(repo, 'add', '--all');
  await sh(repo, 'commit', '--quiet', '-m', 'attack');
}

/** What a project's `.troupe/` holds, recursively. */
function troupeFiles(dir: string): string[] {
  const base = join(dir, '.troupe');
  return existsSync(base) ? (readdirSync(base, { recursive: true }) as string[]).sort() : [];
}

function oneLine(result: CliResult): string[] {
  return result.stderr.trim().split('\n');
}

describe('names in pipelines.lock (M5)', () => {
  it('refuses `../pipes2`, `..` and escapes in one line, writing nothing and leaving no staging folder', async () => {
    const env = userDirs();
    const registry = await tmpRepo({
      'pipelines/ok/1.0.0/agents.yaml': PIPELINE,
      'pipes2/1.0.0/agents.yaml': PIPELINE,
    });
    // a real entry, renamed: its hash is that of pipes2/1.0.0, so only the name can stop it
    const source = project();
    expect((await troupe(source, ['pull', 'ok', '--registry', registry], env)).code).toBe(0);
    const entry = parse(readFileSync(join(source, '.troupe', 'pipelines.lock'), 'utf8')).pipelines.ok;
    for (const name of ['../pipes2', '..', '\u001b]0;pwn\u0007x']) {
      const dir = project({
        '.troupe/pipelines.lock': stringify({ lockfile: 1, pipelines: { [name]: entry } }),
      });
      for (const args of [['pull'], ['pull', '--force']]) {
        const result = await troupe(dir, args, env);
        expect(result.code, `${name} ${args.join(' ')}`).toBe(2);
        expect(oneLine(result)[0]).toMatch(/pipelines\.lock:\d+:\d+: .*pipeline name/);
        expect(result.stderr).not.toContain('EINVAL');
        expect(result.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
        expect(troupeFiles(dir)).toEqual(['pipelines.lock']);
        expect(existsSync(join(dir, 'pipes2'))).toBe(false);
      }
    }
  });
});

describe('symbolic links in a registry (L1, L2)', () => {
  it('refuses a linked pipeline folder or file on pull; search skips each, naming it, and lists the rest', async () => {
    const env = userDirs();
    const local = mkdtempSync(join(tmpdir(), 'troupe-local-'));
    writeFiles(local, { 'agents.yaml': PIPELINE, 'secret.txt': 'TOP-SECRET-LOCAL\n' });
    const registry = await tmpRepo({ 'pipelines/good/1.0.0/agents.yaml': PIPELINE });
    await commitAll(registry, () => {
      mkdirSync(join(registry, 'pipelines', 'sym', '1.0.0'), { recursive: true });
      symlinkSync('/etc/passwd', join(registry, 'pipelines', 'sym', '1.0.0', 'agents.yaml'));
      writeFiles(registry, { 'pipelines/sym2/1.0.0/agents.yaml': PIPELINE });
      symlinkSync('/etc/hostname', join(registry, 'pipelines', 'sym2', '1.0.0', 'notes.txt'));
      symlinkSync(local, join(registry, 'pipelines', 'symdir'));
    });
    const dir = project();
    for (const name of ['symdir', 'sym', 'sym2']) {
      const pulled = await troupe(dir, ['pull', name, '--registry', registry], env);
      expect(pulled.code, name).toBe(1);
      expect(pulled.stderr, name).toContain('is a symbolic link');
    }
    expect(troupeFiles(dir).filter((f) => !f.startsWith('pipelines'))).toEqual([]);
    expect(existsSync(join(dir, '.troupe', 'pipelines', 'symdir'))).toBe(false);

    const search = await troupe(dir, ['search', '--registry', registry], env);
    expect(search.code).toBe(0);
    expect(search.stdout.trim().split('\n')).toEqual(['good  1.0.0']);
    expect(search.stderr).toContain('troupe: skipped symdir: ');
    expect(search.stderr).toContain('troupe: skipped sym: ');
    expect(search.stderr).toContain('troupe: skipped sym2@1.0.0: ');
    expect(search.stderr).not.toContain('TOP-SECRET');
  });

  it('refuses an index.json that is a symbolic link without printing what it points to', async () => {
    const env = userDirs();
    const registry = await tmpRepo({ 'pipelines/good/1.0.0/agents.yaml': PIPELINE });
    await commitAll(registry, () => symlinkSync('/etc/passwd', join(registry, 'index.json')));
    const search = await troupe(project(), ['search', '--registry', registry], env);
    expect(search.code).toBe(1);
    expect(search.stderr).toContain('index.json is a symbolic link');
    expect(search.stderr).not.toContain('root:');
  });
});

describe('file sizes in a registry (L3)', () => {
  it('refuses a file over 1 MiB and a pipeline over 10 MiB, and installs nothing', async () => {
    const env = userDirs();
    const registry = await tmpRepo({
      'pipelines/big/1.0.0/agents.yaml': PIPELINE,
      'pipelines/many/1.0.0/agents.yaml': PIPELINE,
    });
    await commitAll(registry, () => {
      writeFileSync(join(registry, 'pipelines', 'big', '1.0.0', 'huge.bin'), Buffer.alloc(2 * 1024 * 1024));
      for (let i = 0; i < 11; i++) {
        writeFileSync(
          join(registry, 'pipelines', 'many', '1.0.0', `part${i}.bin`),
          Buffer.alloc(1024 * 1024),
        );
      }
    });
    const dir = project();
    const big = await troupe(dir, ['pull', 'big', '--registry', registry], env);
    expect(big.code).toBe(1);
    expect(oneLine(big)[0]).toContain('huge.bin is 2 MiB, over the 1 MiB a registry file may be');
    const many = await troupe(dir, ['pull', 'many', '--registry', registry], env);
    expect(many.code).toBe(1);
    expect(oneLine(many)[0]).toContain('holds more than 10 MiB of files');
    expect(troupeFiles(dir).filter((f) => f !== 'pipelines')).toEqual([]);
  });
});

describe('publishing to a registry with hooks (L4)', () => {
  it('runs none of its hooks, its fsmonitor or its filter drivers, in a checkout or behind a local push', async () => {
    const env = userDirs();
    const witness = mkdtempSync(join(tmpdir(), 'troupe-witness-'));
    const arm = async (repo: string, gitDir: string) => {
      const hooks = join(gitDir, 'hooks');
      mkdirSync(hooks, { recursive: true });
      const names = [
        'post-commit',
        'prepare-commit-msg',
        'pre-commit',
        'commit-msg',
        'reference-transaction',
      ];
      for (const hook of [...names, 'post-index-change', 'pre-receive', 'post-receive', 'update']) {
        const file = join(hooks, hook);
        writeFileSync(file, `#!/bin/sh\ntouch '${witness}/${hook}'\ncat >/dev/null 2>&1\nexit 0\n`);
        chmodSync(file, 0o755);
      }
      const monitor = join(witness, 'fsmonitor.sh');
      writeFileSync(monitor, `#!/bin/sh\ntouch '${witness}/fsmonitor'\nexit 1\n`);
      chmodSync(monitor, 0o755);
      await sh(repo, 'config', 'core.fsmonitor', monitor);
      // a filter driver its .gitattributes names: git add would run it
      await sh(repo, 'config', 'filter.evil.clean', `sh -c 'touch ${witness}/filter-clean; cat'`);
      await sh(repo, 'config', 'filter.evil.process', `sh -c 'touch ${witness}/filter-process'`);
    };
    const checkout = await tmpRepo({ 'README.md': 'registry\n', '.gitattributes': '* filter=evil\n' });
    await arm(checkout, join(checkout, '.git'));
    const bare = `${await tmpRepo({ 'README.md': 'registry\n' })}.git`;
    await sh(tmpdir(), 'clone', '--quiet', '--bare', checkout, bare);
    await arm(bare, bare);
    const dir = project({ '.troupe/pipelines/default.yaml': PIPELINE });
    for (const registry of [checkout, bare]) {
      const published = await troupe(dir, ['publish', '--registry', registry, '--json'], env);
      expect(published.code, published.stderr).toBe(0);
      expect(await rev(registry, 'main')).toBe(JSON.parse(published.stdout).commit);
    }
    expect(readdirSync(witness).filter((f) => f !== 'fsmonitor.sh')).toEqual([]);
  });
});

describe('text from a registry on the terminal (L5)', () => {
  it('prints descriptions, tags and names without escape sequences, control characters or line breaks', async () => {
    const env = userDirs();
    const hostile = '\u001b[2J\u001b]0;title-pwn\u0007evil\ntroupe: Fake: line\u001b]8;;https://x\u001b\\';
    const registry = await tmpRepo({
      'pipelines/shiny/1.0.0/agents.yaml': PIPELINE,
      [`pipelines/\u001b[31mred/1.0.0/agents.yaml`]: PIPELINE,
      'index.json': JSON.stringify([{ name: 'shiny', description: hostile, tags: ['ok', `t\u001b[5m\rx`] }]),
    });
    const search = await troupe(project(), ['search', '--registry', registry], env);
    expect(search.code).toBe(0);
    const printed = search.stdout + search.stderr;
    expect(printed).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(search.stdout.trim().split('\n')).toEqual(['shiny  1.0.0  evil troupe: Fake: line  [ok, t x]']);
    // the name with its escape removed, in the warning
    expect(search.stderr).toContain('troupe: skipped red: invalid pipeline name "red"');
  });
});
