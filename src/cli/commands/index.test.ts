import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMANDS, registerCommands } from './index.js';

describe('registerCommands', () => {
  it('knows the commands each file registers', () => {
    for (const [names, register] of COMMANDS) {
      const program = new Command();
      register(program);
      expect(program.commands.map((c) => c.name())).toEqual(names);
    }
  });

  it('registers only the command named on the command line, else all of them', () => {
    const one = new Command();
    registerCommands(one, 'reject');
    expect(one.commands.map((c) => c.name())).toEqual(['approve', 'reject', 'human-input']);
    for (const invoked of [undefined, '--help', 'nosuch']) {
      const all = new Command();
      registerCommands(all, invoked);
      expect(all.commands.map((c) => c.name())).toEqual(COMMANDS.flatMap(([names]) => names));
    }
  });
});
