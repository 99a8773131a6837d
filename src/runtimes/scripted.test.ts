import type { Script } from '../core/script.js';
import { runtimeContract } from './contract.js';
import { scriptedRuntime } from './scripted.js';

const script = (entry: Script['agents'][string][number]): Script => ({
  agents: { dev: [entry] },
  gates: {},
  human: {},
});

const SCRIPTS: Record<string, Script> = {
  success: script({ reply: 'hi from script\n', usage: { input_tokens: 3, output_tokens: 4 } }),
  rate_limit: script({ error: 'rate_limit', reset_after_s: 60 }),
  auth: script({ error: 'auth' }),
  context_overflow: script({ error: 'context_overflow' }),
  crash: script({ error: 'crash' }),
  overloaded: script({ error: 'overloaded' }),
  network: script({ error: 'network' }),
  hang: script({ reply: 'late', delay_ms: 600_000 }),
};

runtimeContract('scripted', (scenario) => scriptedRuntime(SCRIPTS[scenario]!), {
  success: { scenario: 'success', text: 'hi from script', usage: { input_tokens: 3, output_tokens: 4 } },
  failures: [
    { scenario: 'rate_limit', kind: 'rate_limited' },
    { scenario: 'auth', kind: 'auth' },
    { scenario: 'context_overflow', kind: 'context_overflow' },
    { scenario: 'crash', kind: 'crashed' },
    { scenario: 'overloaded', kind: 'overloaded' },
    { scenario: 'network', kind: 'network' },
  ],
  hang: { scenario: 'hang' },
  // the executor times the scripted runtime out, as it does every runtime
  ownTimeout: false,
});
