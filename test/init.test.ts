import { existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { execa, execaSync } from 'execa';
import { describe, expect, it } from 'vitest';
import { bin, project, repoRoot } from './support/troupe.js';

/**
 * `troupe init` on machines with zero, one and three agent CLIs: the fake CLIs of
 * test/fixtures/fake-clis on a PATH that holds nothing else (not even the real machine's CLIs),
 * logged in or not through the environment doctor's checks read.
 */

type CliName = 'claude' | 'gemini' | 'codex';

/** A machine: a PATH with node, git and the given fake CLIs, a HOME of its own, the variables given. */
function machine(clis: CliName[], env: Record<string, string> = {}) {
  const home = project();
  const path = join(home, 'bin');
  mkdirSync(path);
  symlinkSync(process.execPath, join(path, 'node'));
  // every machine troupe runs on has git; the test's own PATH gives its place
  const git = execaSync('sh', ['-c', 'command -v git']).stdout.trim();
  symlinkSync(git, join(path, 'git'));
  for (const cli of clis) symlinkSync(join(repoRoot, 'test', 'fixtures', 'fake-clis', cli), join(path, cli));
  return { PATH: path, HOME: home, NO_COLOR: '1', ...env };
}

/** Logged in, as far as each CLI's headless check can tell. */
const LOGGED_IN = { ANTHROPIC_API_KEY: 'sk-test', GEMINI_API_KEY: 'test' };

async function init(cwd: string, env: Record<string, string>, args: string[] = []) {
  const run = await execa(process.execPath, [bin, 'init', ...args], {
    cwd,
    env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
  });
  return { code: run.exitCode ?? -1, stdout: String(run.stdout), stderr: String(run.stderr) };
}

const read = (dir: string, file: string) => readFileSync(join(dir, file), 'utf8');
const runtimes = (dir: string) => read(dir, '.troupe/pipelines/default.yaml').match(/runtime: \w+/g);

describe('troupe init on this machine', () => {
  it('no CLI: a scripted team with its script, so the first run works offline', async () => {
    const dir = project();
    const env = machine([]);
    const run = await init(dir, env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^· claude: `claude` is not installed/m);
    expect(run.stdout).toContain('team: scripted (no agent CLI found on PATH)');
    expect(runtimes(dir)).toEqual(['runtime: scripted', 'runtime: scripted', 'runtime: scripted']);
    expect(read(dir, '.troupe/config.yaml')).toBe(
      'default_pipeline: default\nscript: .troupe/scripts/default.yaml\n',
    );
    expect(read(dir, '.troupe/scripts/default.yaml')).toBe(
      read(repoRoot, 'templates/dev-review-deploy/script.yaml'),
    );
    expect(run.stdout).toMatch(/^next: troupe run "your task" /m);
    // the printed next command works: the team runs to the person's approval of the deploy
    const first = await execa(process.execPath, [bin, 'run', 'add /health', '--json'], {
      cwd: dir,
      env,
      extendEnv: false,
      reject: false,
    });
    expect(JSON.parse(String(first.stdout))).toMatchObject({ status: 'awaiting_gate', error: null });
    // and `troupe test` finds the script init wrote (it looked only beside the pipeline)
    const tested = await execa(process.execPath, [bin, 'test'], {
      cwd: dir,
      env,
      extendEnv: false,
      reject: false,
    });
    expect([tested.exitCode, String(tested.stdout)]).toEqual([
      0,
      expect.stringMatching(/^✓ default: completed in 5 stages /),
    ]);
  });

  it('one CLI, logged in: it writes and reviews', async () => {
    const dir = project();
    const run = await init(dir, machine(['gemini'], LOGGED_IN));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^✓ gemini: can run headless here$/m);
    expect(run.stdout).toContain(
      'team: gemini (only gemini can run headless here: it writes and reviews, with different prompts)',
    );
    expect(runtimes(dir)).toEqual(['runtime: gemini', 'runtime: gemini', 'runtime: gemini']);
    expect(existsSync(join(dir, '.troupe/scripts'))).toBe(false);
    expect(read(dir, '.troupe/config.yaml')).toBe('default_pipeline: default\n');
  });

  it('three CLIs, logged in: Claude writes, Gemini reviews', async () => {
    const dir = project();
    const run = await init(dir, machine(['claude', 'gemini', 'codex'], LOGGED_IN), ['--json']);
    expect(run.code, run.stderr).toBe(0);
    const json = JSON.parse(run.stdout);
    expect(json.clis.map((c: { runtime: string; ready: boolean }) => [c.runtime, c.ready])).toEqual([
      ['claude', true],
      ['gemini', true],
      ['codex', true],
    ]);
    expect(json.team).toMatchObject({ writer: 'claude', reviewer: 'gemini' });
    expect(json.written.map((w: { file: string }) => w.file)).toEqual([
      '.troupe/pipelines/default.yaml',
      '.troupe/.gitignore',
      '.troupe/config.yaml',
    ]);
    // the template itself: its writers' seats are claude's, its reviewer's gemini's
    expect(read(dir, '.troupe/pipelines/default.yaml')).toBe(
      read(repoRoot, 'templates/dev-review-deploy/agents.yaml'),
    );
  });

  it('installed but not logged in: said, with the fix, and used only when nothing is ready', async () => {
    const dir = project();
    const run = await init(dir, machine(['claude', 'gemini'], { GEMINI_API_KEY: 'test' }));
    expect(run.stdout).toMatch(/^! claude: not logged in \(run `claude` once and \/login/m);
    expect(run.stdout).toContain('team: gemini (only gemini can run headless here');
    const none = project();
    const notReady = await init(none, machine(['claude', 'gemini']));
    expect(notReady.stdout).toContain(
      'team: claude writes, gemini reviews (claude, gemini installed, but not ready to run headless)',
    );
  });

  it('flags decide everything: --runtimes (writer first), --template, --name; no CLI is probed', async () => {
    const dir = project();
    const run = await init(dir, machine([]), [
      '--runtimes',
      'codex,claude',
      '--template',
      'spec-first-feature',
      '--name',
      'feature',
      '--yes',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toContain('not installed');
    expect(read(dir, '.troupe/pipelines/feature.yaml').match(/runtime: \w+/g)).toEqual([
      'runtime: codex',
      'runtime: claude',
      'runtime: codex',
      'runtime: claude',
    ]);
    expect(read(dir, '.troupe/config.yaml')).toBe('default_pipeline: feature\n');
  });

  it('refuses to overwrite the pipeline without --force, and bad flags are one line, exit 2', async () => {
    const dir = project({ '.troupe/pipelines/default.yaml': 'agents: []\n' });
    const env = machine([]);
    const again = await init(dir, env, ['--runtime', 'claude']);
    expect([again.code, again.stderr]).toEqual([
      2,
      'troupe: .troupe/pipelines/default.yaml already exists\n  hint: pass --force to overwrite it, or --name another',
    ]);
    expect(read(dir, '.troupe/pipelines/default.yaml')).toBe('agents: []\n');
    expect(existsSync(join(dir, '.troupe/config.yaml'))).toBe(false);
    expect((await init(dir, env, ['--runtime', 'claude', '--force'])).code).toBe(0);
    // another name does not silently become the project's default
    const other = await init(dir, env, ['--runtime', 'claude', '--name', 'other']);
    expect([other.code, other.stderr]).toEqual([
      2,
      "troupe: the project's default pipeline is already default; init would make it other\n  hint: pass --force to make other the default, or `troupe pipeline create other` to add it beside",
    ]);
    expect(existsSync(join(dir, '.troupe/pipelines/other.yaml'))).toBe(false);
    expect(read(dir, '.troupe/config.yaml')).toContain('default_pipeline: default');
    expect((await init(dir, env, ['--runtime', 'claude', '--name', 'other', '--force'])).code).toBe(0);
    expect(read(dir, '.troupe/config.yaml')).toContain('default_pipeline: other');
    for (const args of [
      ['--runtimes', 'claude,nope'],
      ['--runtime', 'claude', '--runtimes', 'gemini'],
      ['--name', 'a/b', '--runtime', 'claude'],
    ]) {
      const bad = await init(project(), env, args);
      expect([bad.code, bad.stderr.split('\n')[0]], args.join(' ')).toEqual([
        2,
        expect.stringMatching(/^troupe: /),
      ]);
    }
    const unknown = await init(project(), env, ['--template', 'nope', '--runtime', 'claude']);
    expect(unknown.code).toBe(3);
    // a broken config is refused before anything is written
    const broken = project({ '.troupe/config.yaml': 'defualt_pipeline: x\n' });
    const refused = await init(broken, env, ['--runtime', 'claude']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^troupe: .*config\.yaml:1:1: .*defualt_pipeline/);
    expect(existsSync(join(broken, '.troupe/pipelines'))).toBe(false);
  });
});
