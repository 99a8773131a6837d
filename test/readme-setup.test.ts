import { copyFileSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { project, repoRoot } from './support/troupe.js';
import { quietNpm, userEnv, userPath } from './support/user-env.js';

/**
 * The README's set-up, as a new user types it, then the commands it and the demo point to —
 * offline, with npm's global prefix in a temp folder.
 */

/** The commands of the first block under the README's "Start here", comments dropped. */
function startHere(): string[] {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const block = /## Start here\n[^#]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter(Boolean);
}

describe('the README set-up (npm link into a temp prefix)', () => {
  it('one line puts troupe on PATH and runs the demo, whose printed commands then run as printed', async () => {
    const [install, linkAndDemo, test, ...more] = startHere();
    expect([install, test, more]).toEqual(['npm ci', 'npm test', []]);
    expect(linkAndDemo).toMatch(/^npm link\b.*&& troupe demo$/);
    // a clone in which `npm ci` already ran: this checkout's build and dependencies, behind links
    // (npm is never given the shared node_modules to write in)
    const tmp = project();
    const clone = join(tmp, 'troupe');
    mkdirSync(clone);
    copyFileSync(join(repoRoot, 'package.json'), join(clone, 'package.json'));
    for (const dir of ['bin', 'dist']) symlinkSync(join(repoRoot, dir), join(clone, dir));
    const prefix = join(tmp, 'prefix');
    // the README's line as typed, npm offline and in temp folders; the link builds nothing (npm ci
    // did: this clone has no build script, so a `prepare` that ran would fail)
    const user = userEnv({
      PATH: `${join(prefix, 'bin')}${delimiter}${userPath(process.env.PATH ?? '')}`,
      npm_config_prefix: prefix,
      npm_config_cache: join(tmp, 'npm-cache'),
      npm_config_offline: 'true',
      ...quietNpm,
    });
    const run = await execa('sh', ['-c', linkAndDemo!], {
      cwd: clone,
      env: user,
      extendEnv: false,
      reject: false,
    });
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(String(run.stderr)).not.toMatch(/npm warn/i);
    const status = /^ {2}(troupe status T-[0-9A-F]{6})\s/m.exec(String(run.stdout))?.[1];
    expect(status, String(run.stdout)).toBeDefined();
    const shown = await execa('sh', ['-c', status!], { cwd: clone, env: user, extendEnv: false });
    expect(String(shown.stdout)).toContain('completed');
  });

  it('without troupe on PATH, the demo prints how it was started: node bin/troupe.js', async () => {
    const user = userEnv({ PATH: `${dirname(process.execPath)}:/usr/bin:/bin` });
    const elsewhere = project();
    const demo = await execa('node', [join(repoRoot, 'bin', 'troupe.js'), 'demo'], {
      cwd: elsewhere,
      env: user,
      extendEnv: false,
    });
    const status = /^ {2}(node \S+ status T-[0-9A-F]{6})\s/m.exec(String(demo.stdout))?.[1];
    expect(status, String(demo.stdout)).toBeDefined();
    const shown = await execa('sh', ['-c', status!], { cwd: elsewhere, env: user, extendEnv: false });
    expect(String(shown.stdout)).toContain('completed');
  });
});
