import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sh, tmpRepo } from '../../test/support/git-repo.js';
import { appendBranchSection } from './config-file.js';

describe('appendBranchSection', () => {
  it("writes a new branch's keys so git reads them back, quotes and backslashes included", async () => {
    const repo = await tmpRepo();
    const gitDir = join(repo, '.git');
    const branch = 'troupe/T-1--a"b';
    const base = 'feature/x;y#z\\w"';
    expect(
      await appendBranchSection(gitDir, branch, [
        ['troupeTask', 'T-1'],
        ['troupeBase', base],
      ]),
    ).toBe(true);
    expect(await sh(repo, 'config', '--get', `branch.${branch}.troupeBase`)).toBe(base);
    expect(await sh(repo, 'config', '--get', `branch.${branch}.troupeTask`)).toBe('T-1');
    // git still reads the rest of its config, and no lock is left behind
    expect(await sh(repo, 'config', '--get', 'user.name')).not.toBe('');
    expect(existsSync(join(gitDir, 'config.lock'))).toBe(false);
  });

  it('leaves a branch that already has a section to git config', async () => {
    const repo = await tmpRepo();
    const gitDir = join(repo, '.git');
    await sh(repo, 'config', 'branch.troupe/T-2.troupeTask', 'T-2');
    const before = readFileSync(join(gitDir, 'config'), 'utf8');
    expect(await appendBranchSection(gitDir, 'troupe/T-2', [['troupeBase', 'main']])).toBe(false);
    expect(readFileSync(join(gitDir, 'config'), 'utf8')).toBe(before);
    expect(existsSync(join(gitDir, 'config.lock'))).toBe(false);
  });
});
