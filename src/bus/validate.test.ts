import { describe, expect, it } from 'vitest';
import { isMessageFilename, isValidHandle, messageFilename } from './handle.js';
import type { Header } from './message.js';
import { headerProblem } from './validate.js';

const ok: Header = {
  schema: 1,
  id: '2026-08-22T11-12-13.123Z_pid1_00000000',
  from: 'claude',
  to: ['codex'],
  thread: 't',
  created: '2026-08-22T11:12:13Z',
};

describe('header validation', () => {
  it('accepts a minimal valid header', () => {
    expect(headerProblem(ok)).toBeUndefined();
  });

  it.each([
    [{ id: '../x' }, /id/],
    [{ id: 'x.md' }, /id/],
    [{ id: '.hidden' }, /id/],
    [{ from: 'Claude' }, /from/],
    [{ to: [] }, /to is empty/],
    [{ to: ['a/b'] }, /to 'a\/b'/],
    [{ thread: '' }, /thread is empty/],
    [{ thread: ' t' }, /whitespace/],
    [{ created: '' }, /created is empty/],
    [{ created: 'now' }, /RFC3339/],
    [{ priority: 'high' }, /priority/],
    [{ kind: 'chat' }, /kind/],
  ])('refuses %o', (patch, message) => {
    expect(headerProblem({ ...ok, ...patch })).toMatch(message);
  });

  it('checks schema and known handles only when strict', () => {
    expect(headerProblem({ ...ok, schema: 2 })).toBeUndefined();
    expect(headerProblem({ ...ok, schema: 2 }, { strict: true, agents: ['claude', 'codex'] })).toMatch(
      /schema/,
    );
    expect(headerProblem(ok, { strict: true, agents: ['claude'] })).toMatch(/unknown handle 'codex'/);
    expect(headerProblem({ ...ok, to: ['user'] }, { strict: true, agents: ['claude'] })).toBeUndefined();
  });

  it('handles and file names cannot leave their directory', () => {
    for (const h of ['-x', 'a/b', 'a..b/', '', 'A', 'a b']) expect(isValidHandle(h), h).toBe(false);
    for (const h of ['a', 'codex-2', 'x_y', '0']) expect(isValidHandle(h), h).toBe(true);
    for (const n of ['.x.md', 'a/b.md', 'a\\b.md', 'x', '.md', 'a\0.md'])
      expect(isMessageFilename(n), n).toBe(false);
    expect(messageFilename('abc')).toBe('abc.md');
    expect(() => messageFilename('../abc')).toThrow(/invalid message id/);
  });
});
