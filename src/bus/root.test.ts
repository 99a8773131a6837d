import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AmqrcError, ContextMismatchError } from './errors.js';
import { pinMismatch, resolveRoot } from './root.js';

function tree() {
  const home = mkdtempSync(join(tmpdir(), 'troupe-root-'));
  const repo = join(home, 'repo');
  mkdirSync(join(repo, '.git'), { recursive: true });
  mkdirSync(join(repo, 'sub', 'deep'), { recursive: true });
  return { home, repo, deep: join(repo, 'sub', 'deep') };
}
const rc = (dir: string, body: object, mode = 0o644) => {
  writeFileSync(join(dir, '.amqrc'), JSON.stringify(body));
  chmodSync(join(dir, '.amqrc'), mode);
};

describe('resolveRoot', () => {
  it('follows AMQ precedence: --root, AM_ROOT, project .amqrc, AMQ_GLOBAL_ROOT, repo .agent-mail', () => {
    const { home, repo, deep } = tree();
    mkdirSync(join(repo, '.agent-mail'));
    const env = { HOME: home };
    const at = (e: NodeJS.ProcessEnv, root?: string) =>
      resolveRoot({ cwd: deep, env: { ...env, ...e }, home, ...(root ? { root } : {}) });
    expect(at({})).toMatchObject({ root: join(repo, '.agent-mail'), source: 'detected' });
    expect(at({ AMQ_GLOBAL_ROOT: '/g' })).toMatchObject({ root: '/g', source: 'global' });
    rc(repo, { root: 'mail', project: 'app' });
    expect(at({ AMQ_GLOBAL_ROOT: '/g' })).toMatchObject({ root: join(repo, 'mail'), source: 'amqrc' });
    expect(at({ AM_ROOT: '/e' })).toMatchObject({ root: '/e', source: 'env' });
    expect(at({ AM_ROOT: '/e' }, '/f')).toMatchObject({ root: '/f', source: 'flag' });
  });

  it('inside Git ignores ~/.amqrc and refuses with a context mismatch when nothing is eligible', () => {
    const { home, deep } = tree();
    rc(home, { root: '.agent-mail' });
    expect(() => resolveRoot({ cwd: deep, env: { HOME: home }, home })).toThrow(ContextMismatchError);
    const outside = join(home, 'plain');
    mkdirSync(outside);
    expect(resolveRoot({ cwd: outside, env: { HOME: home }, home })).toMatchObject({
      root: join(home, '.agent-mail'),
      source: 'home_amqrc',
    });
  });

  it('refuses a writable-by-others or symlinked .amqrc unless --root or AM_ROOT is given', () => {
    const { home, repo, deep } = tree();
    rc(repo, { root: 'mail' }, 0o666);
    expect(() => resolveRoot({ cwd: deep, env: { HOME: home }, home })).toThrow(AmqrcError);
    const r = resolveRoot({ cwd: deep, env: { HOME: home, AM_ROOT: '/x' }, home });
    expect(r.root).toBe('/x');
    expect(r.warnings.join()).toMatch(/group- or world-writable/);
    chmodSync(join(repo, '.amqrc'), 0o644);
    writeFileSync(join(home, 'real'), '{"root":"x"}');
    const other = join(repo, 'sub');
    symlinkSync(join(home, 'real'), join(other, '.amqrc'));
    expect(() => resolveRoot({ cwd: deep, env: { HOME: home }, home })).toThrow(/symlink/);
  });

  it('treats a child of .agent-mail as a session of it', () => {
    const { home, repo, deep } = tree();
    mkdirSync(join(repo, '.agent-mail', 'collab'), { recursive: true });
    const r = resolveRoot({
      cwd: deep,
      env: { HOME: home },
      home,
      root: join(repo, '.agent-mail', 'collab'),
    });
    expect(r).toMatchObject({ session: 'collab', baseRoot: join(repo, '.agent-mail') });
  });

  it('reports a pin mismatch only for a pinned shell', () => {
    const r = resolveRoot({ root: '/a', env: { HOME: '/nonexistent' }, cwd: '/', home: '/nonexistent' });
    expect(pinMismatch(r, { AM_ROOT: '/b' })).toBeUndefined();
    expect(pinMismatch(r, { AM_ROOT: '/b', AM_SESSION: 's' })).toMatch(/pinned to \/b/);
    expect(pinMismatch(r, { AM_ROOT: '/a', AM_SESSION: 's' })).toBeUndefined();
  });
});
