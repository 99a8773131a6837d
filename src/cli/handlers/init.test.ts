import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TEMPLATE } from '../commands/init.js';
import { init } from './init.js';
import { capturedIo, scratchProject } from './testing.js';

const defaults = { name: 'default', template: DEFAULT_TEMPLATE, yes: true };

describe('troupe init', () => {
  it('with the runtimes given, writes the team without probing the machine, and says what to run next', async () => {
    const root = scratchProject();
    const io = capturedIo(root);
    expect(await init({ ...defaults, runtimes: 'scripted' }, io)).toBe(0);
    const lines = io.stdout().trimEnd().split('\n');
    expect(lines[0]).toBe('team: scripted (as asked (--runtimes))');
    expect(lines).toContain(
      'created .troupe/pipelines/default.yaml (dev-review-deploy, the default pipeline)',
    );
    expect(lines.at(-1)).toMatch(/^next: troupe run "your task" {3}# offline, scripted replies/);
    expect(existsSync(join(root, '.troupe', 'pipelines', 'default.yaml'))).toBe(true);
  });

  it('prints what it found and wrote as JSON', async () => {
    const io = capturedIo(scratchProject());
    await init({ ...defaults, runtimes: 'claude,gemini', json: true }, io);
    expect(JSON.parse(io.stdout())).toMatchObject({
      team: { writer: 'claude', reviewer: 'gemini' },
      template: DEFAULT_TEMPLATE,
      name: 'default',
      next: 'troupe run "your task"',
    });
  });

  it('refuses --runtime with --runtimes, and --from-aqm with anything but --force and --json', async () => {
    const io = capturedIo(scratchProject());
    await expect(init({ ...defaults, runtime: 'claude', runtimes: 'gemini' }, io)).rejects.toThrow(
      'give --runtime or --runtimes, not both',
    );
    await expect(init({ ...defaults, fromAqm: true, template: 'other' }, io)).rejects.toThrow(
      '--from-aqm converts what .aqm/ has: it takes only --force and --json',
    );
  });
});
