import { describe, expect, it } from 'vitest';
import { providerKey } from './provider-key.js';
import { CLI_RUNTIMES, cliFacts, isCliRuntime, isRuntimeName, RUNTIME_NAMES } from './runtimes.js';

// What the compiler cannot see in the catalog: its values. The factories, login probes and live
// launchers are tables typed over the catalog's names, so the compiler checks those.
describe('the runtime catalog', () => {
  it('knows its own names only (not what every object has)', () => {
    expect(RUNTIME_NAMES.every(isRuntimeName)).toBe(true);
    expect(isRuntimeName('toString')).toBe(false);
    expect(isCliRuntime('openai')).toBe(false);
  });

  it('gives every CLI a binary, an install command and a place in a proposed team', () => {
    for (const name of CLI_RUNTIMES) {
      const cli = cliFacts(name);
      expect(cli.bin, name).toMatch(/^[\w.-]+$/);
      expect(cli.install, name).toMatch(/\S/);
      expect(cli.authHint, name).toMatch(/\S/);
    }
    // each seat ranks every CLI once: init proposes them in a definite order
    for (const seat of ['writes', 'reviews'] as const) {
      const ranks = CLI_RUNTIMES.map((n) => cliFacts(n).team[seat]);
      expect(new Set(ranks).size, seat).toBe(ranks.length);
    }
  });

  it('gives every CLI account an identity, so two accounts never share a rate-limit window', () => {
    for (const name of CLI_RUNTIMES) {
      const [variable] = cliFacts(name).accounts.identity;
      expect(variable, name).toBeDefined();
      const own = providerKey({ runtime: name }, {});
      expect(own).toBe(name);
      const a = providerKey({ runtime: name }, { [variable!]: 'account-a' });
      const b = providerKey({ runtime: name }, { [variable!]: 'account-b' });
      expect(new Set([own, a, b]).size, name).toBe(3);
    }
  });
});
