import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PipelineError } from '../core/errors.js';
import { lockFile, lockText, readLock, writeFileAtomic, writeLock } from './lock.js';

const hash = (c: string) => `sha256:${c.repeat(64)}`;

describe('pipelines.lock', () => {
  it('is written in a fixed order (names, then files sorted) and reads back the same', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'troupe-lock-'));
    const lock = {
      zeta: {
        version: '1.0.0',
        registry: '/r',
        hash: hash('a'),
        files: { 'b.yaml': hash('b'), 'agents.yaml': hash('c') },
      },
      alpha: {
        version: '2.1.0',
        registry: 'git@h:o/r.git',
        hash: hash('d'),
        files: { 'agents.yaml': hash('e') },
      },
    };
    writeLock(root, lock);
    const text = readFileSync(lockFile(root), 'utf8');
    expect(text.indexOf('alpha:')).toBeLessThan(text.indexOf('zeta:'));
    expect(text.indexOf('agents.yaml: sha256:ccc')).toBeLessThan(text.indexOf('b.yaml:'));
    expect(readLock(root)).toEqual(lock);
    expect(lockText(readLock(root)!)).toBe(text);
  });

  it('is absent without a file, and a broken one is an error at its place', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'troupe-lock-'));
    expect(readLock(root)).toBeUndefined();
    writeFileAtomic(
      lockFile(root),
      'lockfile: 1\npipelines:\n  x:\n    version: 1.0.0\n    registry: /r\n    hash: md5:abc\n    files: {}\n',
    );
    expect(() => readLock(root)).toThrow(PipelineError);
    expect(() => readLock(root)).toThrow(/pipelines\.lock:6:11: /);
  });
});
