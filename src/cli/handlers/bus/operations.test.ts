import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Exit } from '../../exit-codes.js';
import { capturedIo } from '../testing.js';
import { init, presenceList, presenceSet } from './operations.js';

describe('troupe bus presence and init', () => {
  beforeEach(() => {
    for (const name of ['AM_ROOT', 'AM_ME', 'AM_SESSION', 'AM_BASE_ROOT']) vi.stubEnv(name, undefined);
  });
  afterEach(() => void vi.unstubAllEnvs());

  it("sets an agent's status and lists it with its note", async () => {
    const root = join(mkdtempSync(join(tmpdir(), 'troupe-bus-handler-')), 'mail');
    await init({ root, agents: 'alice' }, capturedIo(root));
    const set = capturedIo(root);
    expect(await presenceSet({ root, me: 'alice', status: 'reviewing', note: 'PR 12' }, set)).toBe(Exit.ok);
    expect(set.stdout()).toBe('alice: reviewing\n');
    const listed = capturedIo(root);
    await presenceList({ root }, listed);
    expect(listed.stdout()).toMatch(/^alice {12}reviewing {4}\S+ {2}PR 12\n$/);
  });

  it('init refuses an agent handle the bus cannot hold', async () => {
    const root = join(mkdtempSync(join(tmpdir(), 'troupe-bus-handler-')), 'mail');
    await expect(init({ root, agents: 'alice,Bad!' }, capturedIo(root))).rejects.toThrow(
      "invalid agent 'Bad!'",
    );
  });
});
