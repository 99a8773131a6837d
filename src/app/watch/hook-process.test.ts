import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runHookProcess } from './hook-process.js';

/** The built module (`npm run build`), for a watcher in a process of its own. */
const BUILT = fileURLToPath(new URL('../../../dist/app/watch/hook-process.js', import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what: string, check: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const cwd = realpathSync(mkdtempSync(`${tmpdir()}/troupe-hook-`));
const run = (script: string, timeoutMs = 10_000, env: NodeJS.ProcessEnv = process.env) =>
  runHookProcess({ script, cwd, timeoutMs, env });

describe('a hook process (sh -lc in the workspace)', () => {
  it('runs in the workspace with the environment given; stdout and stderr together, made printable', async () => {
    const outcome = await run('pwd; echo "$ISSUE" >&2; printf "\\033[31mred\\033[0m\\n"', 10_000, {
      ...process.env,
      ISSUE: 'ENG-1',
    });
    expect(outcome.ok).toBe(true);
    // two pipes: their lines interleave as they come
    expect([...outcome.output].sort()).toEqual([cwd, 'ENG-1', 'red'].sort());
  });

  it('a non-zero exit is a failure with its code', async () => {
    expect(await run('echo nope; exit 4')).toEqual({ ok: false, why: 'exit 4', output: ['nope'] });
  });

  it('keeps at most 20 lines and 2 KiB of output, and says it cut it', async () => {
    const many = await run('seq 1 100');
    expect(many.output).toHaveLength(21);
    expect(many.output.at(-1)).toBe('… (output cut)');
    const long = await run("head -c 100000 /dev/zero | tr '\\0' x");
    expect(long.output[0]).toHaveLength(2048);
    expect(long.output.at(-1)).toBe('… (output cut)');
  });

  it('past its timeout, its process group is killed', async () => {
    const outcome = await run('sleep 30 & sleep 30', 300);
    expect(outcome).toMatchObject({ ok: false, why: 'timed out after 300 ms: killed' });
  });

  it('a process that left its group and holds the output does not hold the watcher past the timeout', async () => {
    const outcome = await run('setsid sleep 8 & sleep 30', 300);
    expect(outcome).toMatchObject({ ok: false, why: 'timed out after 300 ms: killed' });
  });

  it.skipIf(process.platform !== 'linux')(
    'a hook does not outlive a watcher killed with SIGKILL, nor does what it started',
    async () => {
      const dir = realpathSync(mkdtempSync(`${tmpdir()}/troupe-hook-kill-`));
      const script =
        'setsid sleep 300 & echo $! > escaped; sleep 300 & echo $! > grouped; echo $$ > hook; wait';
      const watcher = spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const { runHookProcess } = await import(${JSON.stringify(BUILT)});
           await runHookProcess({ script: ${JSON.stringify(script)}, cwd: ${JSON.stringify(dir)}, timeoutMs: 600000, env: process.env });`,
        ],
        { stdio: 'ignore' },
      );
      const files = ['escaped', 'grouped', 'hook'].map((f) => `${dir}/${f}`);
      await until('the hook starts', () =>
        files.every((f) => existsSync(f) && readFileSync(f, 'utf8').trim() !== ''),
      );
      const pids = files.map((f) => Number(readFileSync(f, 'utf8')));
      expect(pids.every(alive)).toBe(true);
      watcher.kill('SIGKILL');
      await until('every process of the hook ends after the watcher', () => !pids.some(alive));
    },
    30_000,
  );
});
