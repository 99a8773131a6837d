import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { installedRuntimes } from './installed.js';

function fakeBin(dir: string, name: string, mode = 0o755): string {
  const file = join(dir, name);
  writeFileSync(file, '#!/bin/sh\n');
  chmodSync(file, mode);
  return file;
}

describe('installedRuntimes', () => {
  it('leaves out the CLIs not found: on PATH by name, or at their TROUPE_<NAME>_BIN', () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-bins-'));
    fakeBin(dir, 'claude');
    fakeBin(dir, 'gemini', 0o644); // not executable: not installed
    const codex = fakeBin(dir, 'my-codex');
    expect(installedRuntimes({ PATH: dir })).toEqual(['claude', 'openai', 'command', 'scripted', 'mailbox']);
    expect(
      installedRuntimes({ PATH: dir, TROUPE_CODEX_BIN: codex, TROUPE_CLAUDE_BIN: join(dir, 'nope') }),
    ).toEqual(['codex', 'openai', 'command', 'scripted', 'mailbox']);
    expect(installedRuntimes({ PATH: '' })).toEqual(['openai', 'command', 'scripted', 'mailbox']);
  });
});
