import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLauncherPreference, pickLauncher, readLocalLaunchConfig } from './launcher-preference.js';

function projectWith(local: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-launchers-'));
  mkdirSync(join(dir, '.amq'));
  writeFileSync(join(dir, '.amq', 'launch.local.json'), JSON.stringify(local));
  return dir;
}

describe('launcher preference', () => {
  it('parses as AMQ does: in order, once each, commands appended, unknown names refused', () => {
    expect(parseLauncherPreference('tmux, tmux,cmux')).toEqual(['tmux', 'cmux', 'commands']);
    expect(parseLauncherPreference('commands,tmux')).toEqual(['commands', 'tmux']);
    expect(() => parseLauncherPreference('tmux,kitty')).toThrow(/unsupported launcher 'kitty'/);
  });

  it('picks the first launcher of the preference found here; commands always is', () => {
    expect(pickLauncher(['cmux', 'tmux', 'commands'], () => true)).toBe('cmux');
    expect(pickLauncher(['cmux', 'tmux', 'commands'], (l) => l === 'tmux')).toBe('tmux');
    expect(pickLauncher(['ghostty', 'tmux', 'commands'], () => false)).toBe('commands');
    expect(pickLauncher(['commands', 'tmux'], () => true)).toBe('commands');
  });

  it("reads AMQ's local file and refuses what AMQ refuses", () => {
    expect(readLocalLaunchConfig(mkdtempSync(join(tmpdir(), 'troupe-launchers-')))).toBeUndefined();
    const good = { schema: 1, launcher_preference: ['tmux', 'commands'] };
    expect(readLocalLaunchConfig(projectWith(good))).toEqual(good);
    expect(() => readLocalLaunchConfig(projectWith({ ...good, default_session: 'x' }))).toThrow(
      /"default_session" belongs in .amq\/launch.json/,
    );
    expect(() => readLocalLaunchConfig(projectWith({ schema: 1, launcher_preference: ['tmux'] }))).toThrow(
      /must include "commands"/,
    );
    expect(() =>
      readLocalLaunchConfig(projectWith({ schema: 1, launcher_preference: ['tmux', 'tmux', 'commands'] })),
    ).toThrow(/appears twice/);
    expect(() =>
      readLocalLaunchConfig(projectWith({ schema: 1, launcher_preference: ['x', 'commands'] })),
    ).toThrow(/unsupported launcher preference "x"/);
  });
});
