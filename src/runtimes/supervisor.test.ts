import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { alive } from '../../test/support/processes.js';
import { PROCESS_TAG_ENV, taskProcessTag } from '../core/runtime.js';
import { CliProcess } from './process.js';
import { endTagged, supervisedArgv } from './supervisor.js';

async function until(what: string, check: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`gave up waiting: ${what}`);
    await new Promise((done) => setTimeout(done, 25));
  }
}

function pidsIn(dir: string, names: string[]): number[] {
  return names.map((name) => Number(readFileSync(path.join(dir, name), 'utf8').trim()));
}

/** bash that starts a `sleep` in its group and one that left it with setsid, then waits. */
function treeScript(dir: string, ignoreTerm = false): string[] {
  const trap = ignoreTerm ? "trap '' TERM; " : '';
  return [
    '-c',
    `${trap}setsid sleep 300 & echo $! > ${dir}/escaped; sleep 300 & echo $! > ${dir}/grouped; echo $$ > ${dir}/agent; echo started; wait`,
  ];
}

const linuxOnly = process.platform === 'linux' ? it : it.skip;

describe('the agent supervisor', () => {
  linuxOnly('ends the tree, setsid children included, when the agent exits by itself', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'troupe-sup-'));
    const proc = new CliProcess({
      bin: 'bash',
      args: ['-c', `setsid sleep 300 & echo $! > ${dir}/escaped; echo done`],
      cwd: dir,
    });
    const lines: string[] = [];
    for await (const line of proc.lines()) lines.push(line);
    const exit = await proc.wait();
    expect(lines).toEqual(['done']);
    expect(exit.exitCode).toBe(0);
    const [escaped] = pidsIn(dir, ['escaped']);
    await until('the setsid child ends', () => !alive(escaped!));
  });

  it("does not hand the server's token or the store's URL to the agent", async () => {
    process.env.TROUPE_TOKEN = 'server-secret';
    process.env.TROUPE_STORE = 'postgres://troupe:password@db/troupe';
    try {
      const proc = new CliProcess({
        bin: 'sh',
        args: ['-c', 'printenv TROUPE_TOKEN || echo withheld; printenv TROUPE_STORE || echo withheld'],
        cwd: os.tmpdir(),
      });
      const lines: string[] = [];
      for await (const line of proc.lines()) lines.push(line);
      await proc.wait();
      expect(lines).toEqual(['withheld', 'withheld']);
    } finally {
      delete process.env.TROUPE_TOKEN;
      delete process.env.TROUPE_STORE;
    }
  });

  linuxOnly('stop ends the tree, SIGKILL for what ignores SIGTERM', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'troupe-sup-'));
    const proc = new CliProcess({ bin: 'bash', args: treeScript(dir, true), cwd: dir, killGraceMs: 300 });
    const lines = proc.lines();
    expect((await lines.next()).value).toBe('started');
    const pids = pidsIn(dir, ['escaped', 'grouped', 'agent']);
    expect(pids.every(alive)).toBe(true);
    expect(proc.agentPid).toBe(pids[2]);
    proc.stop();
    const exit = await proc.wait();
    expect(exit.signal).toBe('SIGKILL');
    await until('every process of the agent ends', () => !pids.some(alive));
  });

  linuxOnly('ends the tree when its owner is killed with SIGKILL', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'troupe-sup-'));
    // a stand-in for troupe: starts the supervisor as CliProcess does, then waits forever
    const owner = spawn(
      process.execPath,
      [
        '-e',
        `const {spawn}=require('node:child_process');
         const [argv, env]=JSON.parse(process.argv[1]);
         spawn(process.execPath, argv, {stdio:['ignore','ignore','ignore','pipe'], detached:true, env:{...process.env, ...env}});
         setInterval(()=>{}, 1000);`,
        JSON.stringify([supervisedArgv('bash', treeScript(dir), 2000), { [PROCESS_TAG_ENV]: 'T-OWNER/1' }]),
      ],
      { stdio: 'ignore' },
    );
    await until('the agent starts', () => {
      try {
        return pidsIn(dir, ['escaped', 'grouped', 'agent']).every(alive);
      } catch {
        return false;
      }
    });
    const pids = pidsIn(dir, ['escaped', 'grouped', 'agent']);
    owner.kill('SIGKILL');
    await until('every process of the agent ends after its owner', () => !pids.some(alive));
  });

  linuxOnly("endTagged ends a task's leftover processes and names them", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'troupe-sup-'));
    const tag = `${taskProcessTag('T-LEFT')}dead.3x`;
    const stray = spawn('bash', ['-c', `trap '' TERM; setsid sleep 300 & echo $! > ${dir}/escaped; wait`], {
      env: { ...process.env, [PROCESS_TAG_ENV]: tag },
      stdio: 'ignore',
      detached: true,
    });
    const other = spawn('sleep', ['300'], {
      env: { ...process.env, [PROCESS_TAG_ENV]: `${taskProcessTag('T-OTHER')}1.y` },
      stdio: 'ignore',
    });
    // one this process started itself: its own to end, not a leftover
    const own = spawn('sleep', ['300'], {
      env: { ...process.env, [PROCESS_TAG_ENV]: `${taskProcessTag('T-LEFT')}${process.pid.toString(36)}.z` },
      stdio: 'ignore',
    });
    await until('the stray starts', () => {
      try {
        return alive(pidsIn(dir, ['escaped'])[0]!);
      } catch {
        return false;
      }
    });
    const [escaped] = pidsIn(dir, ['escaped']);
    const ended = await endTagged(taskProcessTag('T-LEFT'), 200);
    expect(ended.map((p) => p.pid).sort()).toEqual([stray.pid, escaped].sort());
    expect(ended.find((p) => p.pid === escaped)?.command).toBe('sleep 300');
    expect(alive(escaped!) || alive(stray.pid!)).toBe(false);
    expect(alive(other.pid!)).toBe(true);
    expect(alive(own.pid!)).toBe(true);
    other.kill('SIGKILL');
    own.kill('SIGKILL');
  });
});
