import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { alive } from '../../test/support/processes.js';
import { runCommandGate } from './command-gate.js';

const linuxOnly = process.platform === 'linux' ? it : it.skip;

describe('a command gate', () => {
  it('approves on exit 0 and rejects with the tail of what it printed', async () => {
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'troupe-gate-'));
    const options = { cwd, timeoutMs: 20_000, signal: new AbortController().signal, env: {} };
    expect(await runCommandGate('true', options)).toEqual({ decision: 'approved', reason: '' });
    expect(await runCommandGate('echo "2 tests failed" >&2; exit 3', options)).toEqual({
      decision: 'rejected',
      reason: 'command exited with 3:\n2 tests failed',
    });
  });

  it("does not hand the server's token or the store's URL to the gate's command", async () => {
    process.env.TROUPE_TOKEN = 'server-secret';
    process.env.TROUPE_STORE = 'postgres://troupe:password@db/troupe';
    try {
      const cwd = mkdtempSync(path.join(os.tmpdir(), 'troupe-gate-'));
      const options = { cwd, timeoutMs: 20_000, signal: new AbortController().signal, env: {} };
      expect(await runCommandGate('test -z "$TROUPE_TOKEN" && test -z "$TROUPE_STORE"', options)).toEqual({
        decision: 'approved',
        reason: '',
      });
    } finally {
      delete process.env.TROUPE_TOKEN;
      delete process.env.TROUPE_STORE;
    }
  });

  linuxOnly('leaves nothing running, not even a child that called setsid', async () => {
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'troupe-gate-'));
    const result = await runCommandGate('setsid sleep 300 & echo $! > escaped', {
      cwd,
      timeoutMs: 20_000,
      signal: new AbortController().signal,
      env: {},
    });
    expect(result.decision).toBe('approved');
    const escaped = Number(readFileSync(path.join(cwd, 'escaped'), 'utf8'));
    const end = Date.now() + 10_000;
    while (alive(escaped) && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
    expect(alive(escaped)).toBe(false);
  });
});
