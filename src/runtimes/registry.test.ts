import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI_RUNTIMES, RUNTIME_NAMES } from '../core/runtimes.js';
import { hintFor } from './classify.js';
import { fakeCli } from './contract.js';
import { cliBin, runtimeFor } from './registry.js';

// The factories are a table the compiler keeps complete over the catalog; what it cannot see is
// whether each entry makes the runtime it is named for, and whether each CLI has its test fixtures.
describe('the runtime registry', () => {
  it('makes, for every runtime of the catalog, the runtime of that name', () => {
    const script = { agents: {}, gates: {}, human: {} };
    for (const name of RUNTIME_NAMES) expect(runtimeFor(name, null, script).name, name).toBe(name);
  });

  it('finds a CLI where config, then TROUPE_<NAME>_BIN, then PATH put it', () => {
    expect(cliBin('claude', { claude: '/opt/claude' }, { TROUPE_CLAUDE_BIN: '/env/claude' })).toBe(
      '/opt/claude',
    );
    expect(cliBin('codex', {}, { TROUPE_CODEX_BIN: '/env/codex' })).toBe('/env/codex');
    expect(cliBin('gemini', undefined, {})).toBe('gemini');
  });

  it('has, for every CLI, a fake CLI to run the contract suite against and its own login hint', () => {
    for (const name of CLI_RUNTIMES) {
      expect(existsSync(fakeCli(name)), `test/fixtures/fake-clis/${name}`).toBe(true);
      expect(hintFor('auth', name), name).toContain(name);
    }
  });
});
