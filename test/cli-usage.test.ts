import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { example, project, troupe } from './support/troupe.js';

/**
 * Usage that forgives (issue #30): every wrong flag or value is one `troupe:` line with a hint and
 * exit 2 — commander's own errors included —, data commands take `--json`, a table row is one line.
 */
describe('usage errors', () => {
  it.each([
    [['lst'], "troupe: unknown command 'lst' (did you mean list?)", '`troupe --help` lists the commands'],
    [['list', '--bogus'], "troupe: unknown option '--bogus'", '`troupe list --help` shows its usage'],
    [
      ['list', '-n', 'abc'],
      "troupe: option '-n, --limit <n>' argument 'abc' is invalid. expects a whole number of at least 1",
      '`troupe list --help` shows its usage',
    ],
    [
      ['agents', '--format', 'dot'],
      "troupe: option '--format <format>' argument 'dot' is invalid. Allowed choices are text, mermaid, json.",
      '`troupe agents --help` shows its usage',
    ],
    [
      ['run', 'x', '--from', 't.json', '-c', '0'],
      "troupe: option '-c, --concurrency <n>' argument '0' is invalid. expects a whole number of at least 1",
      '`troupe run --help` shows its usage',
    ],
    [
      ['bus', 'send', '--body', 'x'],
      "troupe: required option '--to <handles>' not specified",
      '`troupe bus send --help` shows its usage',
    ],
  ])('troupe %j', async (args, line, hint) => {
    const r = await troupe(project(), args);
    expect([r.code, r.stdout, r.stderr]).toEqual([2, '', `${line}\n  hint: ${hint}`]);
  });
});

describe('data commands', () => {
  it('agents --json prints the agents, as --format json', async () => {
    const dir = project();
    const json = await troupe(dir, ['agents', '--file', example('dev-team'), '--json']);
    const format = await troupe(dir, ['agents', '--file', example('dev-team'), '--format', 'json']);
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as Array<{ id: string }>).map((a) => a.id)).toContain('reviewer');
    expect(json.stdout).toBe(format.stdout);
  });

  it('cancel --json prints the cancelled task', async () => {
    const dir = project({ 's.yaml': 'agents:\n  developer: ["done"]\n' });
    const run = await troupe(dir, [
      'run',
      'x',
      '--file',
      example('human-deploy'),
      '--script',
      's.yaml',
      '--json',
    ]);
    const id = (JSON.parse(run.stdout) as { id: string }).id;
    const cancelled = await troupe(dir, ['cancel', id, '--json']);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ id, status: 'cancelled' });
  });

  it('list shows a task whose input has several lines on one line: its first', async () => {
    const dir = project({
      'p.yaml': 'agents:\n  - id: dev\n    runtime: claude\n',
      's.yaml': 'agents:\n  dev: ["ok"]\n',
    });
    const run = await troupe(dir, [
      'run',
      '\nfirst line\nFake row  completed',
      '--file',
      'p.yaml',
      '--script',
      's.yaml',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const listed = await troupe(dir, ['list']);
    expect(listed.stdout.split('\n')).toHaveLength(1);
    expect(listed.stdout).toMatch(/ {2}first line$/);
  });
});

describe('troupe serve', () => {
  it('on a busy port says so, with a hint, and exits 1', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const r = await troupe(project(), ['serve', '--no-token', '--port', String(port)]);
      expect([r.code, r.stderr]).toEqual([
        1,
        `troupe: port ${port} on 127.0.0.1 is in use by another program\n  hint: stop it, or serve on another port: --port ${port + 1}, or --port 0 for any free one`,
      ]);
    } finally {
      busy.close();
    }
  });
});
