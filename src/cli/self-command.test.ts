import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../package-root.js';
import { troupeCommand, troupeCommandAnywhere } from './self-command.js';

describe('troupeCommand: what to tell the user to run next', () => {
  const bin = join(packageRoot(), 'bin', 'troupe.js');
  const dirs = () => {
    const root = mkdtempSync(join(tmpdir(), 'troupe-path-'));
    const linked = join(root, 'linked');
    const other = join(root, 'other');
    mkdirSync(linked);
    mkdirSync(other);
    symlinkSync(bin, join(linked, 'troupe'));
    writeFileSync(join(other, 'troupe'), '#!/bin/sh\n', { mode: 0o755 });
    return { linked, other, root };
  };

  it('troupe, when the first troupe on PATH is this one (npm link)', () => {
    const { linked, other } = dirs();
    expect(troupeCommand({ env: { PATH: `/nowhere:${linked}:${other}` }, cwd: '/' })).toBe('troupe');
    // another troupe first: that is not this one
    expect(troupeCommand({ env: { PATH: `${other}:${linked}` }, cwd: '/' })).not.toBe('troupe');
  });

  it('npx troupe, when started through npx', () => {
    expect(troupeCommand({ env: { PATH: '', npm_command: 'exec' }, cwd: '/' })).toBe('npx troupe');
  });

  it('node with the path to bin/troupe.js otherwise: relative from the clone, absolute from elsewhere', () => {
    expect(troupeCommand({ env: {}, cwd: packageRoot() })).toBe('node bin/troupe.js');
    // deep enough that the way back up is longer than the absolute path, wherever the clone is
    const far = join(dirs().root, ...Array.from({ length: 24 }, (_, i) => `d${i}`));
    mkdirSync(far, { recursive: true });
    expect(troupeCommand({ env: {}, cwd: far })).toBe(`node ${bin}`);
  });

  it('for lines run elsewhere (launch): never relative, even where the relative path is shorter', () => {
    expect(troupeCommand({ env: {}, cwd: packageRoot() })).toBe('node bin/troupe.js');
    expect(troupeCommandAnywhere({})).toBe(`node ${bin}`);
    expect(troupeCommandAnywhere({ PATH: '', npm_command: 'exec' })).toBe('npx troupe');
  });
});
