import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { runHookProcess } from './hook-process.js';

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
});
