import { existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { read, writeFiles } from '../../test/support/git-repo.js';
import { applyScriptedEffects } from './scripted-effects.js';

const dir = () => mkdtempSync(join(tmpdir(), 'troupe-effects-'));

describe('applyScriptedEffects', () => {
  it('writes files (creating folders), deletes the null ones, then runs the command', async () => {
    const cwd = dir();
    writeFiles(cwd, { 'old.txt': 'old' });
    const result = await applyScriptedEffects(cwd, {
      write: { 'src/app.js': 'export {};\n', 'old.txt': null, 'never-there.txt': null },
      run: ['node', '-e', 'process.stdout.write(require("fs").readFileSync("src/app.js", "utf8"))'],
    });
    expect(read(cwd, 'src/app.js')).toBe('export {};\n');
    expect(existsSync(join(cwd, 'old.txt'))).toBe(false);
    expect(result).toEqual({
      written: ['src/app.js'],
      deleted: ['old.txt', 'never-there.txt'],
      ran: { argv: expect.any(Array), exitCode: 0, stdout: 'export {};\n', stderr: '' },
    });
  });

  it('reports a failing command with its exit code (no shell: the argv is literal)', async () => {
    const cwd = dir();
    const result = await applyScriptedEffects(cwd, { run: ['node', '-e', 'process.exit(3)', '; rm -rf /'] });
    expect(result.ran?.exitCode).toBe(3);
  });

  it.each(['../escape.txt', 'a/../../escape.txt', '/etc/x', '', '.git/hooks/pre-commit', '.'])(
    'refuses %j and writes nothing at all',
    async (path) => {
      const parent = dir();
      const cwd = join(parent, 'work');
      mkdirSync(cwd);
      await expect(applyScriptedEffects(cwd, { write: { 'fine.txt': 'x', [path]: 'evil' } })).rejects.toThrow(
        /write: .* (paths must stay inside|is a symlink)/,
      );
      expect(readdirSync(cwd)).toEqual([]);
      expect(readdirSync(parent)).toEqual(['work']);
    },
  );

  it('refuses a path that leads out through a symlink, or writes through one', async () => {
    const outside = dir();
    const cwd = dir();
    symlinkSync(outside, join(cwd, 'link'));
    symlinkSync(join(outside, 'target.txt'), join(cwd, 'file-link'));
    await expect(applyScriptedEffects(cwd, { write: { 'link/x.txt': 'evil' } })).rejects.toThrow(/symlink/);
    await expect(applyScriptedEffects(cwd, { write: { 'file-link': 'evil' } })).rejects.toThrow(/symlink/);
    expect(readdirSync(outside)).toEqual([]);
  });
});
