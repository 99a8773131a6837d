import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSteps, runSteps } from '../scripts/build.js';
import { project, repoRoot } from './support/troupe.js';
import { quietNpm, userEnv } from './support/user-env.js';

/**
 * troupe as npm users get it: `npm pack` in a clean copy of this checkout (which builds it, as
 * `npm publish` would), the tarball installed with `npm install -g` into a temp prefix, then the
 * installed `troupe` run from new projects, with nothing of this checkout on PATH.
 */

const tmp = mkdtempSync(join(tmpdir(), 'troupe-install-'));
const prefix = join(tmp, 'prefix');
const installed = join(prefix, 'lib', 'node_modules', 'troupe');
const checkout = join(tmp, 'checkout');
let packed: { stdout: string; stderr: string };
const installOutput = '';
/** A user's shell: the global prefix's bin first, then this Node, then the system's. */
const user = userEnv({
  PATH: [join(prefix, 'bin'), dirname(process.execPath), '/usr/bin', '/bin'].join(delimiter),
});

function troupe(cwd: string, args: string[]) {
  return execa('troupe', args, { cwd, env: user, extendEnv: false, reject: false, stdin: 'ignore' });
}

/** This checkout's files as a clone has them (tracked, or new and not ignored), node_modules linked. */
async function cleanCheckout(dir: string): Promise<string> {
  const listed = await execa('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: repoRoot,
  });
  for (const file of String(listed.stdout).split('\0')) {
    if (!file || !existsSync(join(repoRoot, file))) continue;
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(join(repoRoot, file), join(dir, file));
  }
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

beforeAll(async () => {
  await cleanCheckout(checkout);
  const npm = userEnv(quietNpm);
  const pack = await execa('npm', ['pack', '--pack-destination', tmp], {
    cwd: checkout,
    env: npm,
    extendEnv: false,
    reject: false,
  });
  packed = { stdout: String(pack.stdout), stderr: String(pack.stderr) };
  expect(pack.exitCode, `${packed.stdout}\n${packed.stderr}`).toBe(0);
  const tarball = join(tmp, packed.stdout.trim().split('\n').at(-1)!);
  // the dependencies' tarballs are in npm's cache since `npm ci`; their metadata, which a global
  // install reads and `npm ci` does not, comes from the registry the first time only
  const install = await execa(
    'npm',
    [
      'install',
      '--global',
      '--prefix',
      prefix,
      '--prefer-offline',
      '--allow-scripts=better-sqlite3,libpq',
      tarball,
    ],
    { cwd: tmp, env: npm, extendEnv: false, reject: false, all: true },
  );
  expect(install.exitCode, String(install.all)).toBe(0);
}, 15 * 60_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('npm pack', () => {
  it('builds with one line of output: no chunk tables, no bundler warning', () => {
    const lines = packed.stdout.split('\n').filter((line) => line.trim() && !line.startsWith('>'));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^troupe build: dist\/ built in [\d.]+ s \(tsc, rolldown, vite\)$/);
    expect(lines[1]).toMatch(/^troupe-.+\.tgz$/);
    expect(`${packed.stdout}${packed.stderr}`).not.toMatch(/INVALID_OPTION|WARN|│/);
  });

  it('the bundler, asked for all it says, has no warning to give', async () => {
    const rolldown = buildSteps.find((step) => step.name === 'rolldown')!;
    const result = await execa(process.execPath, [rolldown.script, ...rolldown.args, '--logLevel', 'debug'], {
      cwd: checkout,
      all: true,
    });
    // rolldown names each warning by its code: [INVALID_OPTION], [CIRCULAR_DEPENDENCY], …
    expect(String(result.all)).not.toMatch(/\[[A-Z][A-Z_]+\]/);
  });

  it('ships the bundle, the dashboard, the examples and the templates; no sources or source maps', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
        const path = join(dir, entry.name);
        if (entry.name === 'node_modules') return [];
        return entry.isDirectory() ? files(path) : [relative(installed, path)];
      });
    const shipped = files(installed);
    for (const needed of [
      'bin/troupe.js',
      'dist/bundle/main.js',
      'dist/web/index.html',
      'examples/dev-team/script.yaml',
      'templates/dev-review-deploy/agents.yaml',
      'schema/pipeline.schema.json',
    ]) {
      expect(shipped).toContain(needed);
    }
    expect(shipped.filter((file) => /\.(map|ts|tsx)$|^(src|test|web|scripts)\//.test(file))).toEqual([]);
    expect(new Set(shipped.map((file) => file.split('/')[0]))).toEqual(
      new Set(['bin', 'dist', 'examples', 'templates', 'schema', 'package.json', 'README.md']),
    );
  });
});

describe('the installed troupe, run from new projects', () => {
  it('installed with nothing left for the user to review or fix', () => {
    expect(installOutput).not.toMatch(/warn|error/i);
  });

  it('--version is the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      version: string;
    };
    const result = await troupe(project(), ['--version']);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(String(result.stdout).trim()).toBe(version);
  });

  it('demo runs offline and prints a status command that works as printed', async () => {
    const dir = project();
    const demo = await troupe(dir, ['demo']);
    expect(demo.exitCode, String(demo.stderr)).toBe(0);
    const status = /^ {2}(troupe status T-[0-9A-F]{6})\s/m.exec(String(demo.stdout))?.[1];
    expect(status, String(demo.stdout)).toBeDefined();
    const shown = await execa('sh', ['-c', status!], { cwd: dir, env: user, extendEnv: false });
    expect(String(shown.stdout)).toContain('completed');
  });

  it('init, validate, run, approve, status: a new project’s first task, offline', async () => {
    const dir = project();
    const init = await troupe(dir, ['init', '--runtime', 'scripted']);
    expect(init.exitCode, String(init.stderr)).toBe(0);
    const validate = await troupe(dir, ['validate']);
    expect(validate.exitCode, `${validate.stdout}\n${validate.stderr}`).toBe(0);

    const run = await troupe(dir, ['run', 'add a health endpoint']);
    const list = await troupe(dir, ['list', '--json']);
    const [task] = JSON.parse(String(list.stdout)) as Array<{ id: string; status: string }>;
    if (run.exitCode === 6) {
      // the template's deployer waits for a person: the user approves from the shell
      expect(task!.status).toBe('awaiting_gate');
      const approve = await troupe(dir, ['approve', task!.id, '-r', 'ship it']);
      expect(approve.exitCode, String(approve.stderr)).toBe(0);
    } else {
      expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    }
    const status = await troupe(dir, ['status', task!.id, '--json']);
    expect(status.exitCode, String(status.stderr)).toBe(0);
    expect((JSON.parse(String(status.stdout)) as { status: string }).status).toBe('completed');
  });

  it('serve: the dashboard from the package, then a clean stop', async () => {
    const server = execa('troupe', ['serve', '--port', '0', '--no-token'], {
      cwd: project(),
      env: user,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    });
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 20_000);
      server.stdout?.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const match = /listening on (http:\/\/\S+)/.exec(out);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
      server.then((r) => reject(new Error(`serve exited (${r.exitCode}): ${String(r.stderr)}`)), reject);
    });
    const page = await fetch(url);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('<div id="root">');
    const script = /<script type="module" crossorigin src="([^"]+)"/.exec(html)?.[1];
    expect(script, html).toBeDefined();
    const asset = await fetch(new URL(script!, url));
    expect(asset.status).toBe(200);
    expect((await asset.text()).length).toBeGreaterThan(10_000);
    server.kill('SIGTERM');
    expect((await server).exitCode).toBe(0);
  });
});

describe('the build runner (scripts/build.js)', () => {
  const node = (name: string, code: string) => ({ name, script: '-e', args: [code] });
  const sink = () => {
    let text = '';
    return { write: (chunk: string) => (text += chunk), text: () => text };
  };

  it('prints one line when every step succeeds, however much the steps print', async () => {
    const out = sink();
    const err = sink();
    const noisy = 'for (let i = 0; i < 200; i++) console.log("chunk", i); console.error("a warning")';
    const code = await runSteps([node('one', noisy), node('two', noisy)], { out, err });
    expect(code).toBe(0);
    expect(out.text()).toMatch(/^troupe build: dist\/ built in [\d.]+ s \(one, two\)\n$/);
    expect(err.text()).toBe('');
  });

  it('prints the failing step’s whole output and its name, and runs no later step', async () => {
    const out = sink();
    const err = sink();
    const code = await runSteps(
      [
        node('fine', 'console.log("quiet")'),
        node(
          'broken',
          'console.log("what went wrong"); console.error("src/x.ts:1:1 error"); process.exit(3)',
        ),
        node('never', 'console.log("ran after a failure")'),
      ],
      { out, err },
    );
    expect(code).toBe(3);
    expect(out.text()).toBe('');
    expect(err.text()).toContain('what went wrong');
    expect(err.text()).toContain('src/x.ts:1:1 error');
    expect(err.text()).toContain('troupe build: broken failed (exit 3)');
    expect(err.text()).not.toContain('quiet');
    expect(err.text()).not.toContain('ran after a failure');
  });
});
