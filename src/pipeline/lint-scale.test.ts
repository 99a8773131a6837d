import { describe, expect, it } from 'vitest';
import { DiagnosticSink } from './diagnostics.js';
import { lintPipeline } from './lint.js';
import { compilePipeline } from './load.js';

/**
 * The graph lints must stay linear in the number of agents (a 10,000-agent file once took 70 s).
 * Counted, not timed: how often the lints read an agent out of the pipeline's list. A linear pass
 * reads each agent a few times; a lookup by `find` inside a loop over the agents reads n².
 */
function agentReads(yaml: string): number {
  const sink = new DiagnosticSink();
  const compiled = compilePipeline(yaml, '<inline>', { requireParams: false }, sink);
  if (!compiled || sink.hasErrors) throw new Error(JSON.stringify(sink.errors()));
  let reads = 0;
  compiled.pipeline.agents = new Proxy(compiled.pipeline.agents, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  lintPipeline(compiled, sink, { pathEnv: '' });
  return reads;
}

/** A chain in which every 4th agent has a gate that rejects back, and one hands to `*`. */
function chain(n: number): string {
  const agents = Array.from({ length: n }, (_, i) => {
    const next = i + 1 < n ? `a${i + 1}` : null;
    const gate = i % 4 === 3 ? '\n    gate: { type: llm }' : '';
    const handoffs = !next
      ? ''
      : i === 1
        ? `\n    handoffs: [{ to: "*", condition: auto }, { to: ${next} }]`
        : gate
          ? `\n    handoffs: [{ to: ${next}, condition: on_approve }, { to: a${i - 1}, condition: on_reject }]`
          : `\n    handoffs: [{ to: ${next} }]`;
    return `  - id: a${i}\n    runtime: scripted${gate}${handoffs}`;
  });
  return `agents:\n${agents.join('\n')}\n`;
}

describe('validate at scale', () => {
  it('reads each agent a bounded number of times, whatever the size', () => {
    const small = agentReads(chain(500));
    const large = agentReads(chain(4000));
    // linear: 8×; quadratic: 64×
    expect(large / small).toBeLessThan(12);
  });
});
