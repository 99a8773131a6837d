import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { changedFiles, hashFiles, hashFolder, sha256 } from './content-hash.js';
import { RegistryError } from './errors.js';

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'troupe-hash-'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

describe('content hashes', () => {
  it('hashes each file with sha256 and the whole over the sorted list, sha256sum style', () => {
    const dir = folder({ 'agents.yaml': 'agents: []\n', 'schemas/out.json': '{}' });
    const hashed = hashFolder(dir);
    expect(hashed.files).toEqual({
      'agents.yaml': sha256('agents: []\n'),
      'schemas/out.json': sha256('{}'),
    });
    // the same as `sha256sum agents.yaml schemas/out.json | sha256sum`
    const lines = `${sha256('agents: []\n').slice(7)}  agents.yaml\n${sha256('{}').slice(7)}  schemas/out.json\n`;
    expect(hashed.hash).toBe(sha256(lines));
    expect(hashed.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('changes when a file is edited, added or renamed, not when nothing changes', () => {
    const base = { 'agents.yaml': 'a', 'README.md': 'r' };
    const hash = hashFolder(folder(base)).hash;
    expect(hashFolder(folder(base)).hash).toBe(hash);
    expect(hashFolder(folder({ ...base, 'agents.yaml': 'b' })).hash).not.toBe(hash);
    expect(hashFolder(folder({ ...base, 'x.yaml': '' })).hash).not.toBe(hash);
    expect(hashFolder(folder({ 'agents.yaml': 'a', 'README.txt': 'r' })).hash).not.toBe(hash);
  });

  it('hashes only the files named, and names the files that differ', () => {
    const dir = folder({ 'agents.yaml': 'a', 'versions.json': '{}' });
    expect(Object.keys(hashFiles(dir, ['agents.yaml']).files)).toEqual(['agents.yaml']);
    expect(changedFiles({ a: '1', b: '2', c: '3' }, { a: '1', b: 'x', d: '4' })).toEqual(['b', 'c', 'd']);
  });

  it('refuses a symbolic link', () => {
    const dir = folder({ 'agents.yaml': 'a' });
    symlinkSync('/etc/passwd', path.join(dir, 'passwd'));
    expect(() => hashFolder(dir)).toThrow(RegistryError);
    expect(() => hashFolder(dir)).toThrow(/is a symbolic link/);
  });
});
