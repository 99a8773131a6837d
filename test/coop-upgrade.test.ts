import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tmpRepo } from './support/git-repo.js';
import { repoRoot, troupe } from './support/troupe.js';

// AMQ's `coop init` and `upgrade` as its README types them (`troupe amq …`), through the built CLI.

describe('amq coop init', () => {
  it('makes the mailboxes and an .amqrc at the Git top, ignored by git, so a plain shell finds the root', async () => {
    const dir = await tmpRepo({ 'README.md': 'x\n', 'src/app.ts': '\n' });
    const r = await troupe(join(dir, 'src'), ['amq', 'coop', 'init']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^Initialized co-op mode:\n {2}Root: .*\/\.agent-mail\n {2}Agents: claude, codex\n {2}Created: \.amqrc\n {2}Updated: \.gitignore\n/,
    );
    expect(JSON.parse(readFileSync(join(dir, '.amqrc'), 'utf8'))).toEqual({ root: '.agent-mail' });
    for (const h of ['claude', 'codex', 'user'])
      expect(existsSync(join(dir, '.agent-mail', 'agents', h, 'inbox', 'new'))).toBe(true);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: dir, encoding: 'utf8' })).toBe(
      '?? .gitignore\n',
    );

    // a plain shell anywhere in the project now sends and reads there
    const sent = await troupe(join(dir, 'src'), [
      'amq',
      'send',
      '--me',
      'claude',
      '--to',
      'codex',
      '--body',
      'hi',
    ]);
    expect(sent.code, sent.stderr).toBe(0);
    const listed = await troupe(dir, ['amq', 'list', '--me', 'codex', '--json']);
    expect(JSON.parse(listed.stdout)).toHaveLength(1);

    // again: nothing rewritten, the same answer
    const again = await troupe(dir, ['amq', 'coop', 'init', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({
      root: join(dir, '.agent-mail'),
      agents: ['claude', 'codex'],
      amqrc_written: false,
      config_written: false,
      gitignore_updated: false,
    });

    // an .amqrc naming another root: refused (exit 1, AMQ's), unless --force
    const other = await troupe(dir, ['amq', 'coop', 'init', '--root', '.mail', '--agents', 'claude,gemini']);
    expect(other.code).toBe(1);
    expect(other.stderr.trim().split('\n')[0]).toMatch(/\.amqrc already names root .*\/\.agent-mail$/);
    const forced = await troupe(dir, [
      'amq',
      'coop',
      'init',
      '--root',
      '.mail',
      '--agents',
      'claude,gemini',
      '--force',
      '--json',
    ]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({ agents: ['claude', 'gemini'], amqrc_written: true });
    expect(JSON.parse(readFileSync(join(dir, '.amqrc'), 'utf8'))).toEqual({ root: '.mail' });

    const bad = await troupe(dir, ['amq', 'coop', 'init', '--root', '.mail', '--agents', '../x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  }, 60_000);
});

describe('amq upgrade', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());
  const current = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string })
    .version;

  /** A stand-in npm registry answering `GET /troupe/latest` with `version`. */
  async function registry(version: unknown): Promise<string> {
    server = createServer((req, res) => {
      if (req.url !== '/troupe/latest') {
        res.writeHead(404).end();
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ name: 'troupe', version }));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  }

  it('prints the current and latest version and the npm command, exit 6; installs nothing', async () => {
    const dir = await tmpRepo();
    const url = await registry('99.1.0');
    const r = await troupe(dir, ['amq', 'upgrade'], { npm_config_registry: url });
    expect(r.code, r.stderr).toBe(6);
    expect(r.stdout).toBe(`troupe ${current} → 99.1.0\nupgrade with: npm install -g troupe@99.1.0`);
    const json = await troupe(dir, ['upgrade', '--json'], { npm_config_registry: url });
    expect(JSON.parse(json.stdout)).toEqual({
      current,
      latest: '99.1.0',
      update_available: true,
      command: 'npm install -g troupe@99.1.0',
    });
  });

  it('up to date: exit 0', async () => {
    const url = await registry(current);
    const r = await troupe(await tmpRepo(), ['upgrade'], { npm_config_registry: url });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`troupe ${current} is the latest (${current} on ${url})`);
  });

  it('offline, or an answer that is not a version: one line, exit 1, nothing of the answer in a command', async () => {
    const dir = await tmpRepo();
    mkdirSync(join(dir, 'x'));
    writeFileSync(join(dir, 'x', 'marker'), '');
    const hostile = await registry('1.0.0; touch pwned');
    const r = await troupe(dir, ['upgrade'], { npm_config_registry: hostile });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/no valid version in its answer/);
    expect(r.stderr).not.toMatch(/pwned/);
    server!.close();
    server = undefined;
    const offline = await troupe(dir, ['upgrade'], { npm_config_registry: hostile });
    expect(offline.code).toBe(1);
    expect(offline.stdout).toBe('');
    expect(offline.stderr.trim().split('\n')).toHaveLength(1);
    expect(offline.stderr).toMatch(
      new RegExp(
        `^troupe: upgrade: ${hostile.replaceAll('.', '\\.')} is not reachable \\(.*\\); troupe is ${current.replaceAll('.', '\\.')}, upgrade later with \`npm install -g troupe@latest\`$`,
      ),
    );
  });
});
